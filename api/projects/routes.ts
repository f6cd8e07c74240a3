import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, listEnvelope, okVersioned, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { CreateProjectBodyDto, ListProjectsQuery, ProjectDto, ProjectParams, UpdateProjectBodyDto } from './model'
import { archiveTenantProject, createProject, getProject, listTenantProjects, patchProject } from './service'

/** Additive (issue 36): projects, a tenant's own resource; its managers write them, its members read them. */
export const projectsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/projects', tags: ['Tenant administration'] })
    .use(http)
    .get('', async ({ request, ctx, query }) => page(request, await listTenantProjects(deps, ctx, query)), {
      auth: 'tenant:read',
      errors: ['T400p'],
      query: ListProjectsQuery,
      response: { 200: listEnvelope(ProjectDto) },
      detail: { summary: 'Projects of this tenant, newest first (archived ones too unless filtered)' },
    })
    .post(
      '',
      async ({ request, ctx, body, set }) => {
        const { project, version } = await createProject(deps, ctx, body)
        set.status = 201
        return okVersioned(request, set, version, project)
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'T409', 'PR409'],
        body: CreateProjectBodyDto,
        response: { 201: envelope(ProjectDto) },
        detail: {
          ...links({ projectId: '$response.body#/data/id' }, [
            'GET /v1/projects/{projectId}',
            'PATCH /v1/projects/{projectId}',
            'DELETE /v1/projects/{projectId}',
            'GET /v1/projects/{projectId}/members',
            'POST /v1/projects/{projectId}/members',
          ]),
          summary: 'Create a project. PROJECT_SLUG_CONFLICT (409): the slug is taken in this tenant',
        },
      },
    )
    .get(
      '/:projectId',
      async ({ request, ctx, params, set }) => {
        const { project, version } = await getProject(deps, ctx, params.projectId)
        return okVersioned(request, set, version, project)
      },
      {
        auth: 'tenant:read',
        errors: ['T400', 'T404'],
        params: ProjectParams,
        response: { 200: envelope(ProjectDto) },
        detail: { summary: 'One project, with its ETag for If-Match (NOT_FOUND outside this tenant)' },
      },
    )
    .patch(
      '/:projectId',
      async ({ request, ctx, params, body, set }) => {
        const { project, version } = await patchProject(deps, ctx, params.projectId, ifMatchVersion(request), body)
        return okVersioned(request, set, version, project)
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404', 'PR409', 'P412'],
        params: ProjectParams,
        body: UpdateProjectBodyDto,
        response: { 200: envelope(ProjectDto) },
        detail: { summary: "Change a project's name, slug or description (If-Match optional: a stale ETag is 412)" },
      },
    )
    .delete(
      '/:projectId',
      async ({ request, ctx, params, set }) => {
        const { project, version } = await archiveTenantProject(deps, ctx, params.projectId)
        return okVersioned(request, set, version, project)
      },
      {
        auth: 'tenant:manage',
        errors: ['T400', 'T404'],
        params: ProjectParams,
        response: { 200: envelope(ProjectDto) },
        detail: { summary: 'Archive a project (soft; answers the archived project). Archiving it again changes nothing' },
      },
    )
