// The node's WebSocket (/api/ws) from Node with the `ws` package: prove the dev account's key,
// subscribe to its mailbox, to typing and to blocks, and print what comes; it ends after three
// blocks (an app would stay). An idle chain makes a block for each transaction and otherwise one
// every 30 s (the heartbeat). Run it from anywhere: node examples/realtime-ws.mjs
import { Buffer } from 'node:buffer'
import WebSocket from 'ws'
import { sign, toBase64, toHex } from '../dist/src/crypto/index.js'
import { sealKeyFromEd25519 } from '../dist/src/relay/index.js'
import { me, nodeUrl } from './dev-account.mjs'

const myX25519Hex = toHex(sealKeyFromEd25519(me.keyPair.secretKey).publicKey)  // the mailbox key
const lastSentAt = Math.floor(Date.now() / 1000)     // sent_at of the newest message held (none yet: now)
let blocks = 0

const ws = new WebSocket(`${nodeUrl.replace(/^http/, 'ws')}/api/ws`)            // ?token=… in token modes
ws.on('message', (data) => {
  const m = JSON.parse(String(data))
  if (m.event === 'hello') {
    const sig = toBase64(sign(Buffer.from(`kith-ws-auth:${m.nonce}:${me.pub}`), me.keyPair.secretKey))
    ws.send(JSON.stringify({ op: 'auth', req: 'a1', nonce: m.nonce, ed25519_pub: me.pub, sig }))
    ws.send(JSON.stringify({ op: 'subscribe', req: 's1', topic: 'mailbox', pub: myX25519Hex, since: lastSentAt - 300 }))
    ws.send(JSON.stringify({ op: 'subscribe', req: 's2', topic: 'typing' }))
    ws.send(JSON.stringify({ op: 'subscribe', req: 's3', topic: 'blocks' }))
  } else if (m.event === 'authenticated' || m.event === 'subscribed') {
    console.log(m.event, m.req)
  } else if (m.event === 'block') {
    console.log(`block ${m.height}: ${m.tx_count} transactions`)
    if (++blocks === 3) ws.close(1000)
  } else if (m.event === 'inbox') {
    // m.sender_ed25519_pub ("" when none) names the chat; fetch the body when that chat is open
  } else if (m.event === 'submit_ack') {
    // m.id is the transaction's id; m.status 'accepted' or 'rejected' with m.code and m.error
  } else if (m.event === 'error') {
    console.error(`the node refused ${m.op} ${m.req}: ${m.error}`)  // m.op and m.req name the request
  }
})
ws.on('close', (code) => { /* 1001: node restarting; 4000: reconnect and resubscribe with since */ console.log(`closed (${code})`) })
