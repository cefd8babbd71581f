/** Errors of the command-line wallet: a typed code, and a message that says what to do. */
export type CliErrorCode =
  | 'NO_KEYS' | 'KEY_NOT_FOUND' | 'KEY_EXISTS' | 'KEY_AMBIGUOUS' | 'BAD_NAME' | 'KEYSTORE_CORRUPT'
  | 'BAD_PASSPHRASE' | 'WRONG_PASSPHRASE' | 'NO_PASSPHRASE'
  | 'BAD_AMOUNT' | 'BAD_RECIPIENT' | 'BAD_TEXT' | 'BAD_ATTACHMENT' | 'BAD_POST_ID' | 'UNKNOWN_POST' | 'BAD_NUMBER' | 'NO_MAILBOX' | 'NODE_UNREACHABLE' | 'NODE_REFUSED' | 'TIMEOUT'
  | 'NO_REGISTRY' | 'NAME_TAKEN' | 'REGISTRY_REFUSED' | 'UNKNOWN_CONTRACT' | 'UNKNOWN_METHOD' | 'BAD_ARGS' | 'BAD_FILE'

export class CliError extends Error {
  constructor (readonly code: CliErrorCode, message: string) {
    super(message)
    this.name = 'CliError'
  }
}
