import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, listEnvelope, okVersioned, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { CreateEmbodimentProfileBodyDto, EmbodimentProfileDto, ListProfilesQuery, ProfileParams, UpdateEmbodimentProfileBodyDto } from './model'
import { createProfile, getProfile, listProfiles, patchProfile, removeProfile } from './service'

/** Additive (issue 13): the contract between a policy and a robot that an edge package is built for. */
export const embodimentProfilesRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/embodiment-profiles', tags: ['Models'] })
    .use(http)
    .get('', async ({ request, ctx, query }) => page(request, await listProfiles(deps, ctx, query)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400p'],
      query: ListProfilesQuery,
      response: { 200: listEnvelope(EmbodimentProfileDto) },
      detail: { summary: 'Embodiment profiles of this tenant you reach, newest first, optionally of one project (a project-scoped token: its project)' },
    })
    .post(
      '',
      async ({ request, ctx, body, set }) => {
        const { profile, version } = await createProfile(deps, ctx, body)
        set.status = 201
        return okVersioned(request, set, version, profile)
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        idempotent: true,
        errors: ['M400', 'M409', 'E409'],
        body: CreateEmbodimentProfileBodyDto,
        response: { 201: envelope(EmbodimentProfileDto) },
        detail: {
          ...links({ profileId: '$response.body#/data/id' }, [
            'GET /v1/embodiment-profiles/{profileId}',
            'PATCH /v1/embodiment-profiles/{profileId}',
            'DELETE /v1/embodiment-profiles/{profileId}',
          ]),
          summary: 'Create an embodiment profile. EMBODIMENT_PROFILE_NAME_CONFLICT (409): the name is taken in this tenant',
        },
      },
    )
    .get(
      '/:profileId',
      async ({ request, ctx, params, set }) => {
        const { profile, version } = await getProfile(deps, ctx, params.profileId)
        return okVersioned(request, set, version, profile)
      },
      {
        auth: { project: 'model:read', of: 'resource' },
        errors: ['M400', 'M404'],
        params: ProfileParams,
        response: { 200: envelope(EmbodimentProfileDto) },
        detail: { summary: 'One embodiment profile, with its ETag for If-Match (NOT_FOUND outside this tenant)' },
      },
    )
    .patch(
      '/:profileId',
      async ({ request, ctx, params, body, set }) => {
        const { profile, version } = await patchProfile(deps, ctx, params.profileId, ifMatchVersion(request), body)
        return okVersioned(request, set, version, profile)
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        errors: ['M400', 'M404', 'E409', 'P412'],
        params: ProfileParams,
        body: UpdateEmbodimentProfileBodyDto,
        response: { 200: envelope(EmbodimentProfileDto) },
        detail: {
          summary: 'Change an embodiment profile (If-Match optional: a stale ETag is 412). Packages already built keep the profile they were built with',
        },
      },
    )
    .delete(
      '/:profileId',
      async ({ ctx, params, set }) => {
        await removeProfile(deps, ctx, params.profileId)
        set.status = 204
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        errors: ['M400', 'M404', 'E409'],
        params: ProfileParams,
        detail: {
          summary: 'Delete an embodiment profile. EMBODIMENT_PROFILE_IN_USE (409) while an edge inference package was built for it',
          responses: { 204: { description: 'Deleted' } },
        },
      },
    )
