#!/usr/bin/env bun
// rcp, the command line of the Robot Control Plane (docs/cli.md). Built into one binary with
// `bun build --compile clients/cli/main.ts --outfile rcp`.
import { loginWithToken, switchTenant, whoami } from './account'
import { Flags, parseArgs } from './args'
import { tail } from './audit'
import { type Command, makeCommand } from './context'
import { deviceLogin } from './device-login'
import { CliError, describeError, EXIT, exitCodeOf, usage } from './exit'
import { createKey, listKeys, revokeKey } from './keys'
import { uploadModel } from './models'
import { makeOutput } from './output'
import { buildPackage, downloadPackage } from './packages'
import { listen } from './webhooks'

export const VERSION = '1.0.0'

const HELP = `rcp: the Robot Control Plane from a terminal

  rcp login [--api URL] [--scopes a,b] [--name NAME]   sign in with the device flow (approve in the console)
  rcp login --token TOKEN|- [--api URL]                sign in with a token (CI); - reads it from stdin
  rcp whoami                                           who and which tenant rcp acts as
  rcp tenants switch <slug|id>                         act in another tenant
  rcp keys create --name N --scopes a,b [--expires-at T]
  rcp keys list
  rcp keys revoke <id>
  rcp models upload <file|folder> --name N --format openpi|lerobot|onnx [--prefix P]
  rcp packages build --model-version ID --profile ID [--mode local|remote_ws] [--remote-host H --remote-port P]
                     [--arch cpu|x86-cuda|jetson-jp6] [--steps N] [--protocols openpi-ws,…] [--fake-transport] [--wait]
  rcp packages download <id> [--verify] [--output FILE.tar.gz]
  rcp webhooks listen (--secret S [--endpoint ID] | --register --events a,b [--url URL])
                      [--cert F --key F] [--host H] [--port P] [--test-event] [--count N]
  rcp audit tail [--since 24h] [--limit 20] [--action PREFIX] [--follow]

Every command: --json (output for scripts), --verbose (requests on stderr), --api URL.
Exit codes: 0 ok, 1 refused or failed, 2 usage, 3 auth, 4 not found, 5 verification failed, 6 server or network.
The token is kept in $XDG_CONFIG_HOME/rcp/config.json (else ~/.config/rcp/config.json), mode 0600.`

type Handler = (cmd: Command) => Promise<void>

const DEFAULT_DEVICE_SCOPES = 'tenant:read,apikey:read,apikey:write,model:read,model:write,tenant:manage'

const commands: Record<string, Handler> = {
  login: async (cmd) => {
    const token = cmd.flags.string('token')
    const scopes = cmd.flags.string('scopes')
    const name = cmd.flags.string('name')
    cmd.flags.done()
    if (token !== undefined) {
      if (scopes || name) throw usage('--scopes and --name are for the device flow; a token already has its scopes')
      return loginWithToken(cmd, token)
    }
    return deviceLogin(cmd, { clientName: name ?? `rcp ${VERSION}`, scopes: (scopes ?? DEFAULT_DEVICE_SCOPES).split(',').filter(Boolean) })
  },
  whoami: (cmd) => {
    cmd.flags.done()
    return whoami(cmd)
  },
  'tenants switch': (cmd) => {
    cmd.flags.done()
    return switchTenant(cmd)
  },
  'keys create': createKey,
  'keys list': listKeys,
  'keys revoke': revokeKey,
  'models upload': uploadModel,
  'packages build': buildPackage,
  'packages download': downloadPackage,
  'webhooks listen': listen,
  'audit tail': tail,
}

export async function run(argv: string[]): Promise<number> {
  let json = false
  try {
    const parsed = parseArgs(argv, new Set(['json', 'verbose', 'help', 'version', 'wait', 'verify', 'register', 'test-event', 'follow', 'fake-transport']))
    json = parsed.flags.get('json') === true
    const flags = new Flags(parsed)
    const verbose = flags.bool('verbose')
    flags.bool('json')
    if (flags.bool('version')) {
      process.stdout.write(`rcp ${VERSION}\n`)
      return EXIT.ok
    }
    const [first, second] = parsed.positionals
    if (flags.bool('help') || first === undefined || first === 'help') {
      process.stdout.write(`${HELP}\n`)
      return first === undefined && !flags.bool('help') ? EXIT.usage : EXIT.ok
    }
    const twoWords = second !== undefined ? commands[`${first} ${second}`] : undefined
    const handler = twoWords ?? commands[first]
    if (!handler) throw usage(`unknown command: rcp ${parsed.positionals.slice(0, 2).join(' ')} (rcp --help lists them)`)
    const args = parsed.positionals.slice(twoWords ? 2 : 1)
    await handler(makeCommand(args, flags, makeOutput(json, verbose)))
    return EXIT.ok
  } catch (e) {
    const code = exitCodeOf(e)
    const message = describeError(e)
    process.stderr.write(json ? `${JSON.stringify({ error: { message, exitCode: code, ...codeOf(e) } })}\n` : `rcp: ${message}\n`)
    if (code === EXIT.usage && !(e instanceof CliError && e.message.startsWith('unknown command')))
      process.stderr.write('(rcp --help lists every command and option)\n')
    return code
  }
}

const codeOf = (e: unknown) => {
  const x = e as { code?: unknown; status?: unknown; requestId?: unknown }
  return typeof x?.code === 'string' && typeof x.status === 'number' ? { code: x.code, status: x.status, requestId: x.requestId ?? null } : {}
}

if (import.meta.main) process.exit(await run(process.argv.slice(2)))
