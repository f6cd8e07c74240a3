import { ZxcvbnFactory } from '@zxcvbn-ts/core'
import { adjacencyGraphs, dictionary } from '@zxcvbn-ts/language-common'
import { ApiError } from '../platform/errors'
import { ARGON2, PasswordHasher, type HashCost } from './password-hasher'

export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 1024
/** zxcvbn's guesses (log10) below which a password counts as common or predictable: its scores 0 and 1. */
const MIN_GUESSES_LOG10 = 6

// One hashing child per process, started on first use (password-hasher.ts says why a child), so one cost per process.
const hasher = new PasswordHasher()
let cost: HashCost = ARGON2
// Verified against when the account does not exist, so a wrong email costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined

/** The cost of the process's new hashes, from PASSWORD_HASH_* (set by the composition root, api/compose.ts). */
export function setPasswordHashCost(next: HashCost): void {
  if (next.memoryCost === cost.memoryCost && next.timeCost === cost.timeCost) return
  cost = { memoryCost: next.memoryCost, timeCost: next.timeCost }
  dummyHash = undefined // so an unknown account still costs what a known one does
}

export const hashPassword = (password: string): Promise<string> => hasher.hash(password, cost)

export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('not-a-real-password-but-the-same-cost')
    await hasher.verify(password, await dummyHash)
    return false
  }
  return hasher.verify(password, hash)
}

// Built on first use (about 0.3 s: it indexes the dictionaries), then shared.
let zxcvbn: ZxcvbnFactory | undefined
const estimator = () => (zxcvbn ??= new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs }))

const violation = (rule: string, message: string) => new ApiError('PASSWORD_POLICY_VIOLATION', `${message} (rule: ${rule})`)

/** NIST SP 800-63B: a minimum length, no composition rules, and no common or predictable passwords. The
 *  message names the rule that failed: min_length, max_length or common_password. `context` (the email, say)
 *  counts as guessable too. */
export function checkPasswordPolicy(password: string, minLength = PASSWORD_MIN_LENGTH, context: string[] = []): void {
  const length = [...password].length
  if (length < minLength) throw violation('min_length', `Password must be at least ${minLength} characters`)
  if (length > PASSWORD_MAX_LENGTH) throw violation('max_length', `Password must be at most ${PASSWORD_MAX_LENGTH} characters`)
  // Long passphrases are checked on their first 100 characters: zxcvbn's cost grows with length.
  const result = estimator().check(password.slice(0, 100), context)
  if (result.guessesLog10 < MIN_GUESSES_LOG10) throw violation('common_password', 'Password is too common or too easy to guess')
}
