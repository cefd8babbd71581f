/**
 * The chain: transactions, blocks, genesis and the pure state transition. Nothing in here does
 * I/O; the node feeds it state readers and stores the write sets it returns. This file is the
 * folder's one door: every name other folders use is listed here (types with `export type`).
 */
export { ADDRESS_PREFIX, addressOf, isPubkeyHex, pubkeyOfAddress, resolveAccount } from './address.js'
export { MICRO_PER_TOKEN, formatAmount } from './amount.js'
export { BlockHeaderSchema, CommitSchema, HashSchema, assembleBlock, blockHash, commitHash, headerCarriesStateHash, txRoot, txRootAndBytes } from './block.js'
export type { Block, BlockHeader, Commit, CommitSignature } from './block.js'
export { canonicalJson } from './canonical-json.js'
export { ChainParamsSchema, GenesisSchema, genesisHash, genesisState, NEW_CHAIN_PARAMS } from './genesis.js'
export type { ChainParams, Genesis, GenesisContract, GenesisState } from './genesis.js'
export { balanceOf, credit, debit, mint } from './ledger.js'
export {
  BASE_POST_FEE, COMPILE_GAS_PER_BYTE, DEFAULT_GAS_LIMIT, DEFAULT_GAS_PRICE, DEPLOY_BYTE_FEE, DEPLOY_GAS_PER_BYTE, MAX_ARGS_JSON_BYTES, MAX_BLOCK_BYTES,
  MAX_BLOCK_GAS, MAX_BLOCK_TXS, MAX_CONTRACT_CODE_BYTES, MAX_GAS_LIMIT, MAX_GAS_PRICE, MAX_INTRO_CHARS, MAX_POST_SIZE,
  MAX_TX_AGE_IN_BLOCK_MS, MIN_CONTACT_FEE_UT, MIN_FEE, POST_BYTE_FEE, POST_METADATA_BYTES, POWER_UNIT_UT, TIMESTAMP_TOLERANCE_MS,
  VALSET_DELAY, postFee
} from './limits.js'
export { MemoryState, StateKeys, StateOverlay, nextStateRoot } from './state.js'
export type { StateReader, StateValue, WriteSet } from './state.js'
export { LanesCache, StateHash, STATE_HASH_BYTES, stateLanesCache } from './state-hash.js'
export {
  REWARD_ID_PREFIX, applyTx, badSignature, checkBlockBounds, checkStateless, checkSubmission, executeBlock, maxBlockTxs, rewardTxId,
  selectBlockTxs, tryApplyTx
} from './transition.js'
export type { BlockExecution, BlockSelection, CheckedTx, ExecuteOptions, SignatureCheck } from './transition.js'
export {
  Base64Schema, MAX_AMOUNT, MAX_MEMO_CHARS, MAX_PAYLOAD_BASE64_CHARS, MAX_TX_ID_LENGTH, PubkeySchema, TX_TYPES, TransactionSchema, plainTransaction,
  X25519Schema, decodePayload, encodePayload, formatTimestamp, sameTx, signTx, signingBytes, timestampMs, txHash, txSize,
  verifyTxSignature, verifyTxSignatureBy, wholeTx
} from './tx.js'
export type { SignatureVerifier, Transaction, TxType } from './tx.js'
export { validatorSetAt } from './validators.js'
export type { ValidatorEntry, ValidatorSetState } from './validators.js'
export { TX_RULES, relayFeeText, deployFee, deployToPrepare } from './rules/index.js'
export { MAX_NICKNAME_CHARS, MAX_DEVICE_NAME_CHARS, MAX_DEVICES } from './rules/identity.js'
export { Registry, asState, ownsMailbox, unixSeconds } from './registry.js'
export type { ContactRecord, ContactStatus, DeviceRecord, IdentityRecord, RelayRecord } from './registry.js'
export { POST_ID_RE, Posts } from './posts.js'
export type { PostRecord } from './posts.js'
export {
  CONTRACT_ID_RE, ContractKeys, Contracts, contractIdFor, gasCost, genesisContractId, installContract, isWellKnown, nextGasPrice,
  settleGasPrice
} from './contract-state.js'
export type {
  CallRecord, ContractCallInput, ContractCallOutcome, ContractExecutor, ContractRecord, ContractStorageView, ContractTransfer,
  DeployInput, LogRecord, PreparedContract
} from './contract-state.js'
export type { BlockContext, CreatePostPayload, TxRule } from './rules/index.js'

// Accounts and the generic transaction builder, shared by the client (which re-exports them) and the relay's fee collector.
export { accountFrom, buildTx, newAccount, newTxId } from './build.js'
export type { Account, BuildOptions } from './build.js'
