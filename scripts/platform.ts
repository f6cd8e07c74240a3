/**
 * What ./scripts/up, ./scripts/test, tests and benchmarks import to run real servers: the process supervisor
 * (supervisor.ts), free ports, and one recipe per server (servers/). Importing it has no side effect; an entry
 * point that spawns calls killChildrenOnExit() and, if it wants an ordered stop, onShutdownSignal().
 */
export * from './env'
export * from './ports'
export * from './supervisor'
export { startMailCatcher, type MailCatcher } from './mail-catcher'
export * from './servers/minio'
export * from './servers/postgres'
export * from './servers/temporal'
