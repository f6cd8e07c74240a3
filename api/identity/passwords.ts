import { ApiError } from '../platform/errors'

// OWASP's minimum for argon2id: 19 MiB, 2 iterations, 1 lane.
const ARGON2 = { algorithm: 'argon2id', memoryCost: 19_456, timeCost: 2 } as const
export const PASSWORD_MIN_LENGTH = 8
export const PASSWORD_MAX_LENGTH = 1024

export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, ARGON2)

// Verified against when the account does not exist, so a wrong email costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined
export async function verifyPassword(password: string, hash: string | null | undefined): Promise<boolean> {
  if (!hash) {
    dummyHash ??= hashPassword('not-a-real-password-but-the-same-cost')
    await Bun.password.verify(password, await dummyHash)
    return false
  }
  return Bun.password.verify(password, hash)
}

export function checkPasswordPolicy(password: string, minLength = PASSWORD_MIN_LENGTH): void {
  if ([...password].length < minLength) {
    throw new ApiError('PASSWORD_POLICY_VIOLATION', `Password must be at least ${minLength} characters (rule: min_length)`)
  }
}
