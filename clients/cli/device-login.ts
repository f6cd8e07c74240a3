// `rcp login` without --token: the device authorization grant (RFC 8628), through the SDK's client like every other
// command. Both operations are public: the client carries no credential. A refusal of the poll is a 400 problem+json
// whose `code` says which RFC answer it is (its `error` member names it as the RFC does); the SDK throws it as an
// RcpError carrying that code.
import { type components, RcpError } from '../ts'
import { describeToken, storeAndReport } from './account'
import type { Command } from './context'
import { CliError, EXIT } from './exit'

type Scope = components['schemas']['CreateDeviceAuthorizationBodyDto']['scopes'][number]

/** RFC 8628 §3.5: slow_down adds 5 seconds to the interval, for this and every later poll. */
export const SLOW_DOWN_STEP_S = 5

export const EXPIRED_MESSAGE = 'the device code expired before it was approved; run `rcp login` again'
export const DENIED_MESSAGE = 'the sign-in was denied in the console'

export interface DeviceLoginOptions {
  clientName: string
  /** Checked by the API (an unknown permission point is its 400 VALIDATION_ERROR), so passed on as given. */
  scopes: string[]
  /** Waits between polls (a test passes a fake clock). */
  sleep?: (ms: number) => Promise<void>
}

/** The poll's answer: the token, or the code of the refusal when it is one of the four the flow expects. */
async function poll(cmd: Command, deviceCode: string): Promise<{ token: string } | { refusal: string }> {
  try {
    return { token: (await cmd.anonymous().POST('/v1/device/tokens', { body: { deviceCode } })).data.data.token }
  } catch (e) {
    if (e instanceof RcpError && e.status === 400 && e.code.startsWith('DEVICE_')) return { refusal: e.code }
    throw e
  }
}

export async function deviceLogin(cmd: Command, options: DeviceLoginOptions): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => Bun.sleep(ms))
  const started = await cmd.anonymous().POST('/v1/device/authorizations', { body: { clientName: options.clientName, scopes: options.scopes as Scope[] } })
  const auth = started.data.data
  // On stderr: with --json, stdout carries only the result, and a person still needs the code.
  cmd.out.note(`To sign in, open ${auth.verificationUriComplete}`)
  cmd.out.note(`and check that it shows the code ${auth.userCode} (or open ${auth.verificationUri} and type it).`)
  cmd.out.note('Waiting for approval…')
  let intervalS = Math.max(1, auth.interval)
  const deadline = Date.now() + auth.expiresIn * 1000
  for (;;) {
    await sleep(intervalS * 1000)
    const polled = await poll(cmd, auth.deviceCode)
    if ('token' in polled) {
      await storeAndReport(cmd, await describeToken(cmd, polled.token))
      return
    }
    switch (polled.refusal) {
      case 'DEVICE_AUTHORIZATION_PENDING':
        if (Date.now() > deadline) throw new CliError(EXIT.auth, EXPIRED_MESSAGE)
        continue
      case 'DEVICE_SLOW_DOWN':
        intervalS += SLOW_DOWN_STEP_S
        continue
      case 'DEVICE_CODE_EXPIRED':
        throw new CliError(EXIT.auth, EXPIRED_MESSAGE)
      case 'DEVICE_ACCESS_DENIED':
        throw new CliError(EXIT.auth, DENIED_MESSAGE)
      default:
        throw new CliError(EXIT.failed, `device sign-in failed: ${polled.refusal}`)
    }
  }
}
