import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { NOTIFICATION_KIND_NAMES, notificationKinds } from './kinds'

const STATES = ['unread', 'read', 'archived'] as const

const common = {
  id: z.uuid(),
  tenantId: z.uuid().nullable().describe('The tenant it is about; null for your account itself'),
  text: z.string().describe('One line saying what happened'),
  state: z.enum(STATES),
  createdAt: z.iso.datetime(),
  readAt: z.iso.datetime().nullable(),
  archivedAt: z.iso.datetime().nullable(),
}

export const NotificationDto = z
  .discriminatedUnion(
    'kind',
    NOTIFICATION_KIND_NAMES.map((kind) => z.object({ ...common, kind: z.literal(kind), fields: notificationKinds[kind].fields })) as unknown as [
      z.ZodObject,
      z.ZodObject,
      ...z.ZodObject[],
    ],
  )
  .meta({ id: 'NotificationDto' })

export const ListNotificationsQuery = PageQuery.extend({
  state: z.enum(STATES).optional().describe('Absent: the inbox (unread and read, not archived)'),
  tenantId: z.uuid().optional().describe('Only notifications about this tenant'),
})

export const NotificationCountDto = z
  .object({
    unread: z.number().int().describe('Notifications not read (archived ones are read)'),
    unseen: z.number().int().describe('Notifications newer than the newest one a list of your inbox has shown you'),
  })
  .meta({ id: 'NotificationCountDto' })

export const ReadAllBodyDto = z
  .strictObject({ upTo: z.uuid().describe('The newest notification you have seen; it and everything before it are marked read') })
  .meta({ id: 'ReadAllNotificationsBodyDto' })

export const ReadAllResponseDto = z
  .object({ markedRead: z.number().int().describe('Notifications that were unread and are read now'), upTo: z.uuid() })
  .meta({ id: 'ReadAllNotificationsResponseDto' })

const mailChoices = (optional: boolean) =>
  z.strictObject(Object.fromEntries(NOTIFICATION_KIND_NAMES.map((k) => [k, optional ? z.boolean().optional() : z.boolean()])) as Record<string, z.ZodBoolean>)

export const NotificationPreferencesDto = z
  .object({ mail: mailChoices(false).describe('Whether each kind is also mailed to you (at most one mail of a kind an hour)') })
  .meta({ id: 'NotificationPreferencesDto' })

export const PutNotificationPreferencesBodyDto = z
  .strictObject({ mail: mailChoices(true).describe('Your choices; a kind left out returns to its default') })
  .meta({ id: 'PutNotificationPreferencesBodyDto' })
