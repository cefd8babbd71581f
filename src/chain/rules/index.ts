/** The table of transaction types this node accepts, keyed by type. */
import type { TxType } from '../tx.js'
import type { TxRule } from './types.js'
import { callContractRule, deployContractRule } from './contracts.js'
import { acceptContactRule, contactBlockRule, contactRequestRule } from './contacts.js'
import { createPostRule, deletePostRule, followRule, likePostRule, unfollowRule, unlikePostRule } from './feed.js'
import { linkDeviceRule, registerKeyRule, unlinkDeviceRule } from './identity.js'
import { bindWalletRule, heartbeatRule, registerRelayRule, relayProofRule } from './relay.js'
import { stakeRule, unstakeRule } from './staking.js'
import { blockRewardRule, transferRule } from './transfer.js'

export const TX_RULES: Partial<Record<TxType, TxRule<unknown>>> = {
  TRANSFER: transferRule,
  BLOCK_REWARD: blockRewardRule,
  STAKE: stakeRule,
  UNSTAKE: unstakeRule,
  REGISTER_KEY: registerKeyRule,
  LINK_DEVICE: linkDeviceRule,
  UNLINK_DEVICE: unlinkDeviceRule,
  CONTACT_REQUEST: contactRequestRule,
  ACCEPT_CONTACT: acceptContactRule,
  CONTACT_BLOCK: contactBlockRule,
  REGISTER_RELAY: registerRelayRule,
  HEARTBEAT: heartbeatRule,
  BIND_WALLET: bindWalletRule,
  RELAY_PROOF: relayProofRule,
  CREATE_POST: createPostRule,
  DELETE_POST: deletePostRule,
  LIKE_POST: likePostRule,
  UNLIKE_POST: unlikePostRule,
  FOLLOW: followRule,
  UNFOLLOW: unfollowRule,
  DEPLOY_CONTRACT: deployContractRule,
  CALL_CONTRACT: callContractRule
}

export { relayFeeText } from './relay.js'
export { deployFee, deployToPrepare } from './contracts.js'
export type { CreatePostPayload } from './feed.js'

export type { BlockContext, BlockGas, TxContext, TxRule } from './types.js'
export { newBlockGas } from './types.js'
