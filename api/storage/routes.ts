import { Elysia } from 'elysia'
import type { AppDeps } from '../http/deps'
import { envelope, ok } from '../http/envelope'
import { httpConventions } from '../http/plugin'
import { StorageRegionsResponseDto } from './model'
import { regionsFromConfig } from './regions'

export const storageRoutes = (deps: AppDeps) => {
  // Endpoints and keys never leave the server: clients see ids, names and availability.
  const regions = regionsFromConfig(deps.config).map(({ id, name, available }) => ({ id, name, available }))
  return new Elysia({ tags: ['Storage'] })
    .use(httpConventions(deps))
    .get('/storage-regions', ({ request }) => ok(request, { regions, defaultRegionId: regions[0]!.id }), {
      public: true, errors: ['S400'], response: { 200: envelope(StorageRegionsResponseDto) },
      detail: { summary: 'Storage regions a tenant can provision into' },
    })
}
