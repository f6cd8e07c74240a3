import postgres from 'postgres'

export type Sql = postgres.Sql<Record<string, never>>
export type Tx = postgres.TransactionSql<Record<string, never>>
/** Either the pool or an open transaction: query modules accept both so callers choose the transaction. */
export type Db = Sql | Tx

export function createDb(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // bigint versions and counters come back as JS numbers; all stay far below 2^53.
    types: { bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) } },
    transform: { undefined: null },
    connection: { application_name: 'rcp' },
  }) as unknown as Sql
}
