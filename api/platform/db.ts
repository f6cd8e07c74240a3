import postgres from 'postgres'

export type Sql = postgres.Sql<Record<string, never>>
export type Tx = postgres.TransactionSql<Record<string, never>>
/** Either the pool or an open transaction: query modules accept both so callers choose the transaction. */
export type Db = Sql | Tx

/** `name` becomes application_name (pg_stat_activity); `settings` are session parameters for every connection. */
export function createDb(url: string, options: { max?: number; name?: string; settings?: Record<string, string> } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // bigint versions and counters come back as JS numbers; all stay far below 2^53.
    types: { bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } },
    transform: { undefined: null },
    connection: { application_name: options.name ?? 'rcp', ...options.settings },
  }) as unknown as Sql
}
