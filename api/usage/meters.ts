// The meters: what the platform measures for each tenant, declared in code. Each names how its events aggregate over
// a period and the unit its integer quantities count. Billing prices a meter by its name; the usage summary and the
// console read this table, so a meter exists nowhere else.

export const AGGREGATIONS = ['count', 'sum', 'max', 'unique_count'] as const
export type Aggregation = (typeof AGGREGATIONS)[number]

export interface MeterDefinition {
  aggregation: Aggregation
  unit: string
  description: string
}

/** `count`: how many occurrences (an event may stand for several: quantity); `sum`: the quantities added; `max`: the
 *  largest quantity; `unique_count`: how many distinct subjects. Every result is a whole number of `unit`. */
export const METERS = {
  'edge_package.builds': { aggregation: 'count', unit: 'build', description: 'Edge packages built (counted when a build finishes ready)' },
  'edge_package.bytes': { aggregation: 'sum', unit: 'byte', description: 'Bytes of the signed archives those builds produced' },
  'webhook.deliveries': {
    aggregation: 'count',
    unit: 'attempt',
    description: 'Webhook delivery attempts that reached the receiver (it answered with any HTTP status); refused and unreachable sends are not counted',
  },
  'model_validation.cpu': {
    aggregation: 'sum',
    unit: 'cpu_millisecond',
    description: "CPU time of the worker process while a model version's objects were read and hashed",
  },
  'model_validation.versions': { aggregation: 'unique_count', unit: 'model_version', description: 'Distinct model versions validated' },
  'storage.byte_hours': {
    aggregation: 'sum',
    unit: 'byte_hour',
    description: "Stored bytes times hours held: each hourly sample of the tenant's storage summary adds its bytes times one hour",
  },
  'storage.peak_bytes': { aggregation: 'max', unit: 'byte', description: 'The largest stored size any hourly sample saw' },
  'api_requests.session': { aggregation: 'count', unit: 'request', description: 'API requests admitted with a console session' },
  'api_requests.personal_access_token': { aggregation: 'count', unit: 'request', description: 'API requests admitted with a personal access token' },
} as const satisfies Record<string, MeterDefinition>

export type Meter = keyof typeof METERS
export const METER_NAMES = Object.keys(METERS) as Meter[]
export const isMeter = (name: string): name is Meter => Object.hasOwn(METERS, name)

/** The meter of API requests made with a credential class (api/http's principal.credential). */
export const apiRequestsMeter = (credential: 'session' | 'personal_access_token'): Meter => `api_requests.${credential}`
