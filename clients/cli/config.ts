// Where rcp keeps its credentials: $XDG_CONFIG_HOME/rcp/config.json, else ~/.config/rcp/config.json; the folder is
// 0700 and the file 0600, written to a temporary file and renamed so a reader never sees half of it. One credential
// per tenant (a personal access token is bound to one tenant); `current` names the one commands use.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { CliError, EXIT } from './exit'

export interface Credential {
  tenantId: string | null
  tenantSlug: string | null
  /** rcp_pat_… or rcp_ses_…: never printed, never logged. */
  token: string
  credentialClass: 'session' | 'personal_access_token'
  expiresAt: string
}

export interface Config {
  apiUrl: string | null
  /** The tenant id of the credential in use ('' for a credential without a tenant). */
  current: string | null
  credentials: Credential[]
}

export function configDir(env: Record<string, string | undefined> = process.env): string {
  const base = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME ?? homedir(), '.config')
  return join(base, 'rcp')
}

export const configFile = (env?: Record<string, string | undefined>) => join(configDir(env), 'config.json')

export function loadConfig(): Config {
  const file = configFile()
  if (!existsSync(file)) return { apiUrl: null, current: null, credentials: [] }
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<Config>
    return { apiUrl: parsed.apiUrl ?? null, current: parsed.current ?? null, credentials: Array.isArray(parsed.credentials) ? parsed.credentials : [] }
  } catch {
    throw new CliError(EXIT.failed, `${file} is not valid JSON; remove it and sign in again`)
  }
}

export function saveConfig(config: Config): void {
  const dir = configDir()
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700) // a folder made earlier by something else keeps its mode otherwise
  const file = configFile()
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
  chmodSync(temp, 0o600)
  renameSync(temp, file)
}

const keyOf = (tenantId: string | null) => tenantId ?? ''

/** Adds (or replaces) the credential for its tenant and makes it current. */
export function storeCredential(config: Config, apiUrl: string, credential: Credential): Config {
  const credentials = config.credentials.filter((c) => keyOf(c.tenantId) !== keyOf(credential.tenantId))
  return { apiUrl, current: keyOf(credential.tenantId), credentials: [...credentials, credential] }
}

export function currentCredential(config: Config): Credential | undefined {
  return config.credentials.find((c) => keyOf(c.tenantId) === config.current)
}
