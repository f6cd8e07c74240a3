// What every command receives: its parsed flags, the output, and a way to reach the API as the signed-in caller.
import { createRcpClient, type RcpClient } from '../ts'
import type { Flags } from './args'
import { type Config, type Credential, currentCredential, loadConfig } from './config'
import { CliError, EXIT } from './exit'
import type { Output } from './output'

export interface Command {
  args: string[]
  flags: Flags
  out: Output
  /** --api, else RCP_API_URL, else the URL saved at sign-in. */
  apiUrl(): string
  config(): Config
  /** A client with the current credential; exit 3 when there is none. */
  client(): { rcp: RcpClient; credential: Credential }
  /** A client without credentials (public operations, or a token being checked). */
  anonymous(token?: string): RcpClient
}

export function makeCommand(args: string[], flags: Flags, out: Output): Command {
  let config: Config | undefined
  const api = flags.string('api')
  const cmd: Command = {
    args,
    flags,
    out,
    config: () => {
      config ??= loadConfig()
      return config
    },
    apiUrl() {
      const url = api ?? process.env.RCP_API_URL ?? cmd.config().apiUrl
      if (!url) throw new CliError(EXIT.usage, 'no API URL: pass --api https://… (it is saved at sign-in) or set RCP_API_URL')
      if (!/^https?:\/\//.test(url)) throw new CliError(EXIT.usage, `--api must be an http(s) URL, not ${JSON.stringify(url)}`)
      return url.replace(/\/+$/, '')
    },
    client() {
      const credential = currentCredential(cmd.config())
      if (!credential) throw new CliError(EXIT.auth, 'not signed in: run `rcp login` (or `rcp login --token <PAT>`)')
      return { rcp: cmd.anonymous(credential.token), credential }
    },
    anonymous(token) {
      return createRcpClient({
        baseUrl: cmd.apiUrl(),
        auth: token ? { token } : undefined,
        fetch: (request) => {
          // method and path only: the Authorization header is never written out
          out.debug(`${request.method} ${new URL(request.url).pathname}`)
          return globalThis.fetch(request)
        },
      })
    },
  }
  return cmd
}
