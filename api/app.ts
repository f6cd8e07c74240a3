import { Elysia } from 'elysia'
import { healthRoutes } from './health/routes'
import type { AppDeps } from './compose'
import { raiseBunHeaderLimit } from './http/arrival'
import { openapiRoutes } from './http/openapi'
import { RouteTable } from './http/method-index'
import { httpConventions } from './http/plugin'
import { docsRoutes } from './docs/routes'
import { consoleRoutes } from './console/routes'
import { apiKeysRoutes } from './api-keys/routes'
import { deviceAuthorizationsRoutes } from './device-authorizations/routes'
import { onboardingRoutes } from './onboarding/routes'
import { membershipsRoutes } from './memberships/routes'
import { ssoRoutes } from './sso/routes'
import { domainsRoutes } from './domains/routes'
import { authPolicyRoutes } from './auth-policy/routes'
import { loginOptionsRoutes } from './login-options/routes'
import { passwordResetsRoutes } from './password-resets/routes'
import { mfaRoutes } from './mfa/routes'
import { sessionsRoutes } from './sessions/routes'
import { signInRoutes } from './sign-in/routes'
import { storageRoutes } from './storage/routes'
import { tenantsRoutes } from './tenants/routes'
import { usersRoutes } from './users/routes'
import { notificationsRoutes } from './notifications/routes'
import { embodimentProfilesRoutes } from './embodiment-profiles/routes'
import { projectMembersRoutes } from './project-members/routes'
import { projectsRoutes } from './projects/routes'
import { legalHoldsRoutes } from './legal-holds/routes'
import { personalDataRoutes } from './personal-data/routes'
import { offboardingRoutes } from './offboarding/routes'
import { trainingJobsRoutes } from './training-jobs/routes'
import { modelVersionsRoutes } from './model-versions/routes'
import { webhookEndpointsRoutes } from './webhook-endpoints/routes'
import { webhooksDocument } from './webhook-endpoints/event-types'
import { edgePackagesRoutes } from './edge-packages/routes'
import { webhookDeliveriesRoutes } from './webhook-deliveries/routes'
import { auditRoutes } from './audit/routes'
import { tenantDeletionRoutes } from './tenant-deletion/routes'
import { usageRoutes } from './usage/routes'
import { billingRoutes } from './billing/routes'

/** The whole HTTP surface. Domains are separate Elysia instances, each with its own prefix under /v1. */
export function buildApp(deps: AppDeps) {
  const serve = {
    // Bun's own hard stop sits above ours, so an honest oversize gets our problem body, not a bare 413;
    // object uploads stream far more (the JSON parser stops reading at MAX_BODY_BYTES).
    maxRequestBodySize: Math.max(deps.config.MAX_BODY_BYTES * 4 + 65536, deps.config.MODEL_UPLOAD_MAX_BYTES + 65536),
  }
  raiseBunHeaderLimit() // likewise for the request line and headers: an overlong target gets our 431 problem
  const app = new Elysia({ serve: serve as { maxRequestBodySize: number } })
  // The conventions, built once and handed to every domain; the route table reaches their 405 answers once filled.
  const routes = new RouteTable()
  const http = httpConventions(deps, routes)
  app
    .use(http)
    .use(healthRoutes(deps))
    .use(openapiRoutes((req) => app.handle(req), { webhooks: webhooksDocument() }))
    // A prefixed instance, not .group(): a group copies the request hooks of the plugins used inside it into the
    // app a second time, so every request would pay for them twice.
    .use(
      new Elysia({ prefix: '/v1' })
        .use(usersRoutes(deps, http))
        .use(notificationsRoutes(deps, http))
        .use(sessionsRoutes(deps, http))
        .use(signInRoutes(deps, http))
        .use(tenantsRoutes(deps, http))
        .use(apiKeysRoutes(deps, http))
        .use(deviceAuthorizationsRoutes(deps, http))
        .use(storageRoutes(deps, http))
        .use(mfaRoutes(deps, http))
        .use(authPolicyRoutes(deps, http))
        .use(passwordResetsRoutes(deps, http))
        .use(loginOptionsRoutes(deps, http))
        .use(membershipsRoutes(deps, http))
        .use(onboardingRoutes(deps, http))
        .use(ssoRoutes(deps, http))
        .use(domainsRoutes(deps, http))
        .use(projectsRoutes(deps, http))
        .use(legalHoldsRoutes(deps, http))
        .use(projectMembersRoutes(deps, http))
        .use(billingRoutes(deps, http))
        .use(personalDataRoutes(deps, http))
        .use(offboardingRoutes(deps, http))
        .use(embodimentProfilesRoutes(deps, http))
        .use(trainingJobsRoutes(deps, http))
        .use(modelVersionsRoutes(deps, http))
        .use(webhookEndpointsRoutes(deps, http))
        .use(edgePackagesRoutes(deps, http))
        .use(webhookDeliveriesRoutes(deps, http))
        .use(auditRoutes(deps, http))
        .use(tenantDeletionRoutes(deps, http))
        .use(usageRoutes(deps, http)),
    )
    .use(docsRoutes())
    .use(consoleRoutes())
  routes.publish(app.routes)
  return app
}

export type App = ReturnType<typeof buildApp>
