// The TypeScript SDK of the Robot Control Plane API (docs/clients.md).
export { type Auth, SessionJar } from './auth'
export { type ClientOptions, createRcpClient, type RcpClient } from './client'
export { type Problem, RcpError } from './errors'
export { etagOf, ifMatch, read } from './etag'
export { idempotentOperations, type ListPath, listPaths } from './operations.gen'
export { items, type ListInit, type ListItem } from './pages'
export { defaultRetryPolicy, type RetryPolicy, retryAfterMs } from './retry'
export type { components, paths } from './schema.gen'
