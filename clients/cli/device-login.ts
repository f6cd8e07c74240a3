// `rcp login` without --token: the device authorization grant (RFC 8628). The API's two operations are not in this
// branch's OpenAPI document yet, so they are called with plain fetch, typed by the small interfaces below (the contract
// the API is built to); once they are, these become the generated types.
import { describeToken, storeAndReport } from './account'
import type { Command } from './context'
import { CliError, EXIT } from './exit'

interface DeviceAuthorization {
  deviceCode: string
  userCode: string
  verificationUri: string
  verificationUriComplete: string
  expiresIn: number
  interval: number
}

interface DeviceToken {
  token: string
  tokenType: string
  expiresAt: string
  tenantId: string | null
  scopes: string[]
}

type PollCode = 'DEVICE_AUTHORIZATION_PENDING' | 'DEVICE_SLOW_DOWN' | 'DEVICE_CODE_EXPIRED' | 'DEVICE_ACCESS_DENIED'

/** RFC 8628 §3.5: slow_down adds 5 seconds to the interval, for this and every later poll. */
export const SLOW_DOWN_STEP_S = 5

export interface DeviceLoginOptions {
  clientName: string
  scopes: string[]
  /** Waits between polls (a test passes a fake clock). */
  sleep?: (ms: number) => Promise<void>
}

async function post<T>(cmd: Command, path: string, body: unknown): Promise<{ status: number; data?: T; code?: string; message?: string }> {
  const url = `${cmd.apiUrl()}${path}`
  cmd.out.debug(`POST ${path}`)
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const parsed = (await res.json().catch(() => ({}))) as { data?: T; code?: string; message?: string; detail?: string }
  if (res.status >= 500) throw new CliError(EXIT.server, `${path} answered ${res.status}${parsed.code ? ` ${parsed.code}` : ''}`)
  return { status: res.status, data: parsed.data, code: parsed.code, message: parsed.message ?? parsed.detail }
}

export async function deviceLogin(cmd: Command, options: DeviceLoginOptions): Promise<void> {
  const sleep = options.sleep ?? ((ms: number) => Bun.sleep(ms))
  const started = await post<DeviceAuthorization>(cmd, '/v1/device/authorizations', { clientName: options.clientName, scopes: options.scopes })
  if (started.status !== 201 || !started.data) {
    throw new CliError(
      started.status === 404 ? EXIT.notFound : EXIT.failed,
      `the API refused to start a device sign-in: ${started.code ?? started.status} ${started.message ?? ''}`.trim(),
    )
  }
  const auth = started.data
  // On stderr: with --json, stdout carries only the result, and a person still needs the code.
  cmd.out.note(`To sign in, open ${auth.verificationUriComplete}`)
  cmd.out.note(`and check that it shows the code ${auth.userCode} (or open ${auth.verificationUri} and type it).`)
  cmd.out.note('Waiting for approval…')
  let intervalS = Math.max(1, auth.interval)
  const deadline = Date.now() + auth.expiresIn * 1000
  for (;;) {
    await sleep(intervalS * 1000)
    const polled = await post<DeviceToken>(cmd, '/v1/device/tokens', { deviceCode: auth.deviceCode })
    if (polled.status === 200 && polled.data) {
      await storeAndReport(cmd, await describeToken(cmd, polled.data.token))
      return
    }
    const code = polled.code as PollCode | undefined
    if (code === 'DEVICE_AUTHORIZATION_PENDING') {
      if (Date.now() > deadline) throw new CliError(EXIT.auth, 'the device code expired before it was approved; run `rcp login` again')
      continue
    }
    if (code === 'DEVICE_SLOW_DOWN') {
      intervalS += SLOW_DOWN_STEP_S
      continue
    }
    if (code === 'DEVICE_CODE_EXPIRED') throw new CliError(EXIT.auth, 'the device code expired before it was approved; run `rcp login` again')
    if (code === 'DEVICE_ACCESS_DENIED') throw new CliError(EXIT.auth, 'the sign-in was denied in the console')
    throw new CliError(
      polled.status === 401 || polled.status === 403 ? EXIT.auth : EXIT.failed,
      `device sign-in failed: ${polled.code ?? polled.status} ${polled.message ?? ''}`.trim(),
    )
  }
}
