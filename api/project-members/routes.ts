import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, ifMatchVersion, listEnvelope, ok, okVersioned, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { AddProjectMemberBodyDto, ListProjectMembersQuery, ProjectMemberDto, ProjectMemberParams, UpdateProjectMemberBodyDto } from './model'
import { addProjectMember, getProjectMember, listMembersOfProject, patchProjectMember, removeProjectMember } from './service'

const ProjectParams = ProjectMemberParams.pick({ projectId: true })

/** Additive (issue 36): who may act in a project. Reading needs model:read in the project, changing project:manage
 *  (tenant owners and admins everywhere, a project's maintainers there). */
export const projectMembersRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/projects/:projectId/members', tags: ['Tenant administration'] })
    .use(http)
    .get('', async ({ request, ctx, params, query }) => page(request, await listMembersOfProject(deps, ctx, params.projectId, query)), {
      auth: { project: 'model:read' },
      errors: ['T400p', 'T404'],
      params: ProjectParams,
      query: ListProjectMembersQuery,
      response: { 200: listEnvelope(ProjectMemberDto) },
      detail: { summary: "A project's members, newest first, each with what they hold in the project now" },
    })
    .post(
      '',
      async ({ request, ctx, params, body, set }) => {
        const member = await addProjectMember(deps, ctx, params.projectId, body)
        set.status = 201
        return okVersioned(request, set, member.version, member)
      },
      {
        auth: { project: 'project:manage' },
        idempotent: true,
        errors: ['T400', 'T404', 'A409'],
        params: ProjectParams,
        body: AddProjectMemberBodyDto,
        response: { 201: envelope(ProjectMemberDto) },
        detail: {
          ...links({ projectId: '$request.path.projectId', userId: '$response.body#/data/userId' }, [
            'GET /v1/projects/{projectId}/members/{userId}',
            'PATCH /v1/projects/{projectId}/members/{userId}',
            'DELETE /v1/projects/{projectId}/members/{userId}',
          ]),
          summary:
            'Add a tenant member to the project with a role, an optional overlay and expiry. SUBJECT_NOT_IN_TENANT (404): not a member of this tenant; USER_ALREADY_MEMBER (409): already in the project',
        },
      },
    )
    .get(
      '/:userId',
      async ({ request, ctx, params, set }) => {
        const member = await getProjectMember(deps, ctx, params.projectId, params.userId)
        return okVersioned(request, set, member.version, member)
      },
      {
        auth: { project: 'model:read' },
        errors: ['T400', 'T404'],
        params: ProjectMemberParams,
        response: { 200: envelope(ProjectMemberDto) },
        detail: { summary: 'One project membership, with its ETag for If-Match' },
      },
    )
    .patch(
      '/:userId',
      async ({ request, ctx, params, body, set }) => {
        const member = await patchProjectMember(deps, ctx, params.projectId, params.userId, ifMatchVersion(request), body)
        await deps.pats.fence() // a narrower role, overlay or expiry narrows the member's project tokens
        return okVersioned(request, set, member.version, member)
      },
      {
        auth: { project: 'project:manage' },
        errors: ['T400', 'T404', 'P412'],
        params: ProjectMemberParams,
        body: UpdateProjectMemberBodyDto,
        response: { 200: envelope(ProjectMemberDto) },
        detail: { summary: "Change a project member's role, overlay (replaced whole) or expiry (If-Match optional: a stale ETag is 412)" },
      },
    )
    .delete(
      '/:userId',
      async ({ request, ctx, params }) => {
        const member = await removeProjectMember(deps, ctx, params.projectId, params.userId, ifMatchVersion(request))
        await deps.pats.fence()
        return ok(request, member)
      },
      {
        auth: { project: 'project:manage' },
        errors: ['T400', 'T404', 'P412'],
        params: ProjectMemberParams,
        response: { 200: envelope(ProjectMemberDto) },
        detail: { summary: 'Remove a member from the project (answers the membership as it was; If-Match optional)' },
      },
    )
