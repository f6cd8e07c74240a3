import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import type { HttpConventions } from '../http/plugin'
import {
  ListNotificationsQuery,
  NotificationCountDto,
  NotificationDto,
  NotificationPreferencesDto,
  PutNotificationPreferencesBodyDto,
  ReadAllBodyDto,
  ReadAllResponseDto,
} from './model'
import { changeNotification, countInbox, getPreferences, listInbox, putPreferences, readAll } from './service'

/** The signed-in user's inbox across tenants. A session only: a personal access token belongs to one tenant, and the
 *  inbox tells of every tenant the user is in (docs/api.md, Notifications). */
export const notificationsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/users/me', tags: ['Notifications'] })
    .use(http)
    .get('/notifications', async ({ request, ctx, query }) => page(request, await listInbox(deps, ctx, query)), {
      auth: 'session',
      errors: ['A400p'],
      query: ListNotificationsQuery,
      response: { 200: listEnvelope(NotificationDto) },
      detail: { summary: 'Your notifications, newest first; listing marks seen what the page shows' },
    })
    .get('/notifications/count', async ({ request, ctx }) => ok(request, await countInbox(deps, ctx)), {
      auth: 'session',
      errors: ['A400'],
      response: { 200: envelope(NotificationCountDto) },
      detail: { summary: 'How many of your notifications are unread, and how many arrived since a list last showed you your inbox' },
    })
    .post('/notifications/read-all', async ({ request, ctx, body }) => ok(request, await readAll(deps, ctx, body.upTo)), {
      auth: 'session',
      errors: ['A400', 'A404'],
      body: ReadAllBodyDto,
      response: { 200: envelope(ReadAllResponseDto) },
      detail: { summary: 'Mark read the given notification and every one before it (never one that arrived after it)' },
    })
    .post(
      '/notifications/:notificationId/read',
      async ({ request, ctx, params }) => ok(request, await changeNotification(deps, ctx, params.notificationId, 'read')),
      {
        auth: 'session',
        errors: ['A400', 'A404'],
        response: { 200: envelope(NotificationDto) },
        detail: { summary: 'Mark a notification read' },
      },
    )
    .post(
      '/notifications/:notificationId/unread',
      async ({ request, ctx, params }) => ok(request, await changeNotification(deps, ctx, params.notificationId, 'unread')),
      {
        auth: 'session',
        errors: ['A400', 'A404'],
        response: { 200: envelope(NotificationDto) },
        detail: { summary: 'Mark a notification unread (an archived one returns to the inbox)' },
      },
    )
    .post(
      '/notifications/:notificationId/archive',
      async ({ request, ctx, params }) => ok(request, await changeNotification(deps, ctx, params.notificationId, 'archive')),
      {
        auth: 'session',
        errors: ['A400', 'A404'],
        response: { 200: envelope(NotificationDto) },
        detail: { summary: 'Archive a notification (archiving marks it read)' },
      },
    )
    .get('/notification-preferences', async ({ request, ctx }) => ok(request, await getPreferences(deps, ctx)), {
      auth: 'session',
      errors: ['A400'],
      response: { 200: envelope(NotificationPreferencesDto) },
      detail: { summary: 'Which kinds of notification are also mailed to you' },
    })
    .put('/notification-preferences', async ({ request, ctx, body }) => ok(request, await putPreferences(deps, ctx, body.mail)), {
      auth: 'session',
      errors: ['A400'],
      body: PutNotificationPreferencesBodyDto,
      response: { 200: envelope(NotificationPreferencesDto) },
      detail: { summary: 'Choose which kinds are mailed to you; a kind left out returns to its default' },
    })
