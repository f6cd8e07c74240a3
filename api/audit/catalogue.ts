// The audit action catalogue: every action an entry may carry, with what it means and what its target is. The
// table in docs/security.md is generated from it (test/audit/catalogue.test.ts keeps the two equal) and recordAudit accepts
// nothing else. Dotted names, `<object>.<past tense>`, as WorkOS and GitHub name theirs.

type Scope = 'account' | 'tenant'
const a = (scope: Scope, target: string | null, summary: string) => ({ scope, target, summary })

export const auditCatalogue = {
  // Account: the user's own sign-ins and credentials. Kept in the account's chain; shown in security activity.
  'user.registered': a(
    'account',
    'user',
    'An account was created; details.via is self_registration, tenant_invitation, registration_invitation or sso (with details.connectionId: a first single sign-on made it).',
  ),
  'user.signed_in': a('account', 'session', 'A session was started; details.method is password, passkey or sso.'),
  'user.sign_in_failed': a(
    'account',
    'user',
    'A sign-in failed; details.method says how; reason is its class, never what was typed: invalid_credentials, throttled, not_active, method_not_allowed, and for sso state_invalid, connection_disabled, provider_failed, email_unverified, domain_not_covered, link_required.',
  ),
  'user.mfa_challenge_passed': a('account', 'session', 'A session answered its sign-in second-factor challenge.'),
  'user.mfa_challenge_failed': a('account', 'session', 'A second-factor answer was wrong or expired.'),
  'user.totp_enrolled': a('account', 'user', 'An authenticator app (TOTP) was confirmed as a second factor.'),
  'user.totp_removed': a('account', 'user', 'The TOTP second factor was removed.'),
  'user.passkey_added': a('account', 'passkey', 'A passkey was registered.'),
  'user.passkey_removed': a('account', 'passkey', 'A passkey was removed.'),
  'user.notification_preferences_updated': a('account', 'user', 'The account chose which kinds of notification are mailed (details.mail, details.before).'),
  'user.password_changed': a('account', 'user', 'The account password was changed by its owner.'),
  'user.password_reset_requested': a('account', 'user', 'A password reset was requested (by the user, or for them by an administrator).'),
  'user.password_reset_completed': a('account', 'user', 'A password reset was confirmed and the password replaced.'),
  'user.profile_updated': a('account', 'user', 'The display name or another profile field changed; changes has before and after.'),
  'user.sso_identity_linked': a('account', 'sso_identity', 'An SSO identity was linked to the account.'),
  'user.sso_identity_unlinked': a('account', 'sso_identity', 'An SSO identity was unlinked from the account.'),
  'session.ended': a('account', 'session', 'A session was signed out or revoked.'),
  'session.others_ended': a('account', 'user', 'Every other session of the user was ended; details.count says how many.'),
  'session.all_ended': a('account', 'user', 'Every session of a user was ended (by the user or an administrator).'),
  'device_authorization.denied': a(
    'account',
    'device_authorization',
    'A person denied a device sign-in (RFC 8628); details has the client name, its scopes and address.',
  ),
  'session.tenant_switched': a('account', 'membership', 'A session moved to another membership (tenant).'),
  'user.erased': a(
    'account',
    'user',
    'The account was erased by its owner: sessions ended, tokens revoked, memberships removed, factors and personal data erased; details has the counts. The actor label is the pseudonym.',
  ),
  // Tenant: changes to a tenant's people, policies, integrations and resources. Kept in the tenant's chain.
  'tenant.created': a('tenant', 'tenant', 'A tenant was created; its creator became its owner.'),
  'user.provisioned': a('tenant', 'user', 'An administrator created an account with an initial password and a membership.'),
  'invitation.created': a('tenant', 'invitation', 'Someone was invited to the tenant; details.role is the role offered.'),
  'invitation.accepted': a('tenant', 'invitation', 'An invitation was accepted and a membership created.'),
  'invitation.revoked': a('tenant', 'invitation', 'A pending invitation was revoked.'),
  'membership.updated': a('tenant', 'membership', "A membership's role, status or expiry changed; changes has before and after."),
  'membership.removed': a('tenant', 'membership', 'A member was removed from the tenant.'),
  'membership.password_reset_requested': a(
    'tenant',
    'membership',
    "An administrator sent a member a password reset (the member's own activity shows it as user.password_reset_requested).",
  ),
  'membership.sso_provisioned': a(
    'tenant',
    'membership',
    'A single sign-on gave its user a membership just in time; details has connectionId, role and accountCreated.',
  ),
  'api_key.created': a('tenant', 'api_key', 'A personal access token was created; details.scopes lists its scopes.'),
  'api_key.revoked': a('tenant', 'api_key', 'A personal access token was revoked by its owner.'),
  'api_key.revoked_by_admin': a('tenant', 'api_key', "An administrator revoked another member's token."),
  'device_authorization.approved': a(
    'tenant',
    'device_authorization',
    'A person approved a device sign-in (RFC 8628) for this tenant; details has the client name, its scopes and address. The token is minted when the device collects it (api_key.created).',
  ),
  'device_authorization.refused': a(
    'tenant',
    'device_authorization',
    "A device's collection of an approved sign-in was refused and no token minted: details.reason says what changed since the approval (membership_not_active, scopes_beyond_role, tenant_offboarding, tenant_billing_blocked).",
  ),
  'api_key.member_keys_revoked': a('tenant', 'membership', 'An administrator revoked every live token of one member; details.count.'),
  'auth_policy.updated': a('tenant', 'auth_policy', "The tenant's authentication policy changed; changes has before and after."),
  'sso_connection.created': a('tenant', 'sso_connection', 'An SSO connection was created.'),
  'sso_connection.updated': a('tenant', 'sso_connection', 'An SSO connection changed; changes has before and after (never the client secret).'),
  'domain.added': a('tenant', 'domain', 'A domain was claimed by the tenant.'),
  'domain.verified': a('tenant', 'domain', 'A domain verification was attempted; outcome says whether the TXT record matched.'),
  'domain.removed': a('tenant', 'domain', 'A domain was removed.'),
  'storage.provisioning_requested': a('tenant', 'storage', "The tenant's storage was requested in a region."),
  'storage.provisioned': a('tenant', 'storage', "The tenant's buckets were created (system actor)."),
  'storage.reconciliation_started': a('tenant', 'reconciliation_job', 'A storage reconciliation job was started.'),
  'webhook_endpoint.created': a('tenant', 'webhook_endpoint', 'A webhook endpoint was created.'),
  'webhook_endpoint.updated': a('tenant', 'webhook_endpoint', 'A webhook endpoint changed; changes has before and after.'),
  'webhook_endpoint.deleted': a('tenant', 'webhook_endpoint', 'A webhook endpoint was deleted.'),
  'webhook_endpoint.secret_rotated': a('tenant', 'webhook_endpoint', "A webhook endpoint's signing secret was rotated."),
  'webhook_endpoint.disabled': a('tenant', 'webhook_endpoint', 'A webhook endpoint was disabled by the platform (410 Gone or failing too long).'),
  'webhook_endpoint.recovery_started': a('tenant', 'webhook_endpoint', 'Failed messages of an endpoint were queued again.'),
  'webhook_message.redelivered': a('tenant', 'webhook_message', 'One message was sent again to one endpoint.'),
  'webhook_endpoint.test_sent': a('tenant', 'webhook_endpoint', 'A test event was sent to an endpoint.'),
  'project.created': a('tenant', 'project', 'A project was created.'),
  'project.updated': a('tenant', 'project', 'A project changed (name, slug or description); changes has before and after.'),
  'project.archived': a('tenant', 'project', 'A project was archived.'),
  'legal_hold.placed': a(
    'tenant',
    'legal_hold',
    'A legal hold was placed; details.scopeKind is tenant, member or project (whom it holds is on the hold alone).',
  ),
  'legal_hold.released': a('tenant', 'legal_hold', 'A legal hold was released; details.scopeKind as when placed.'),
  'project_member.added': a('tenant', 'project', 'A tenant member was added to a project; subject is the member, details has role, overlay and expiresAt.'),
  'project_member.updated': a('tenant', 'project', "A project member's role, overlay or expiry changed; changes has before and after."),
  'project_member.removed': a('tenant', 'project', 'A member was removed from a project; details has what the membership gave.'),
  'embodiment_profile.created': a('tenant', 'embodiment_profile', 'An embodiment profile was created.'),
  'embodiment_profile.updated': a('tenant', 'embodiment_profile', 'An embodiment profile changed; changes has before and after.'),
  'embodiment_profile.deleted': a('tenant', 'embodiment_profile', 'An embodiment profile was deleted.'),
  'training_job.created': a('tenant', 'training_job', 'A training job was recorded.'),
  'training_job.completed': a('tenant', 'training_job', 'A training job was reported finished; details.status.'),
  'model_version.created': a('tenant', 'model_version', 'A model version was created.'),
  'model_version.upload_urls_issued': a('tenant', 'model_version', 'Presigned upload URLs were issued for a model version.'),
  'model_version.object_uploaded': a('tenant', 'model_version', 'An object of a model version was uploaded through the API; details has its key and size.'),
  'model_version.validation_started': a('tenant', 'model_version', 'Validation of a model version was started.'),
  'edge_package.created': a('tenant', 'edge_package', 'An edge inference package build was requested.'),
  'edge_package.run_reported': a('tenant', 'edge_package', 'A robot reported a finished run of a package.'),
  'tenant.deletion_requested': a(
    'tenant',
    'tenant_deletion_job',
    'A deletion job of the tenant was started; details.trigger is request (an owner) or window_elapsed.',
  ),
  'tenant.deletion_retried': a('tenant', 'tenant_deletion_job', 'A failed deletion job was started again.'),
  'tenant.deletion_blocked': a(
    'tenant',
    'tenant_deletion_job',
    'A deletion job stopped before a batch because a blocker appeared (a legal hold); details.code says which (system actor).',
  ),
  'tenant.deleted': a(
    'tenant',
    'tenant',
    "The tenant's data was deleted; details.receipt is the signed deletion receipt (DSSE), details.receiptSha256 its payload's hash (system actor).",
  ),
  'audit_log.export_started': a('tenant', 'audit_export', 'An export of the audit log was started; details has the window.'),
  'subscription.created': a('tenant', 'subscription', "The tenant's subscription was created with the tenant, on the price book's default plan."),
  'subscription.updated': a(
    'tenant',
    'subscription',
    'The subscription changed (plan, status, cancel at period end); changes has before and after; details.move names the move of the state table.',
  ),
  'subscription.payment_recorded': a('tenant', 'subscription', 'A payment event (details.type: paid or payment_failed) was recorded for the subscription.'),
  'invoice.finalized': a(
    'tenant',
    'invoice',
    "A period's invoice snapshot was finalized (system actor, or the member who closed it); details has period, total and hash.",
  ),
  'billing.blocked': a('tenant', 'subscription', 'The tenant became billing-blocked: new work is refused; details.reasons says why.'),
  'billing.unblocked': a('tenant', 'subscription', 'The billing block was lifted: new work is accepted again.'),
  'tenant.offboarding_requested': a(
    'tenant',
    'offboarding_request',
    'An owner opened the offboarding of the tenant: new work stops; details has the retention window.',
  ),
  'tenant.offboarding_exported': a(
    'tenant',
    'offboarding_request',
    'The offboarding export was written and signed and its links mailed to the owners; details has its counts and the manifest SHA-256.',
  ),
  'tenant.offboarding_cancelled': a('tenant', 'offboarding_request', 'An owner cancelled the offboarding before its window ended: the tenant is active again.'),
  'tenant.offboarding_window_elapsed': a('tenant', 'offboarding_request', 'The retention window of the offboarding ended: the tenant may now be deleted.'),
} as const

export type AuditAction = keyof typeof auditCatalogue
export const auditActions = Object.keys(auditCatalogue) as AuditAction[]
export const isAccountAction = (action: AuditAction) => auditCatalogue[action].scope === 'account'

/** The table of actions in docs/security.md, generated here so the two cannot drift (test/audit/catalogue.test.ts). */
export const auditCatalogueMarkdown = (): string =>
  [
    '| action | log | target | meaning |',
    '|---|---|---|---|',
    ...auditActions.map((k) => {
      const e = auditCatalogue[k]
      return `| \`${k}\` | ${e.scope} | ${e.target ?? ''} | ${e.summary.replace(/\|/g, '\\|')} |`
    }),
  ].join('\n')
