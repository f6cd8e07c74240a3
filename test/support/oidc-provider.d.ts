// oidc-provider ships no types; the SSO test only constructs it and mounts its request handler.
declare module 'oidc-provider' {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    callback(): (req: unknown, res: unknown) => void
  }
}
