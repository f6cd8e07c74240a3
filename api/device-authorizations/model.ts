import { z } from 'zod'
import { PERMISSIONS } from '../identity/permissions'

/** The console's page where a person enters or confirms a user code (api/console/routes.ts serves it). */
export const DEVICE_PAGE_PATH = '/console/device'
/** RFC 8628 section 6.1: consonants only, no vowels (no words) and nothing that reads as a digit or another letter. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
export const USER_CODE_LENGTH = 8
export const DEVICE_CODE_LIFETIME_SECONDS = 600
export const POLL_INTERVAL_SECONDS = 5

const USER_CODE_SHOWN = new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`)
// What a person may type: letters in either case, dashes and spaces, which normalising drops.
const USER_CODE_TYPED = /^[A-Za-z -]{8,20}$/
// A name for people to read: 1 to 64 characters (code points, so the document's length and ours agree), no control
// characters (it is shown in the console and the audit trail).
const CLIENT_NAME = /^[^\x00-\x1f\x7f]{1,64}$/u

const userCode = z.string().regex(USER_CODE_TYPED).describe('The code the device showed, as typed: case, dashes and spaces do not matter')

export const CreateDeviceAuthorizationBodyDto = z
  .strictObject({
    clientName: z.string().regex(CLIENT_NAME).describe('What the person approving is told is asking (e.g. "rcp on build-host-3")'),
    scopes: z
      .array(z.enum(PERMISSIONS))
      .min(1)
      .max(PERMISSIONS.length * 2)
      .describe('Permission points the token asks for; the approver must hold every one in the tenant they approve for'),
  })
  .meta({ id: 'CreateDeviceAuthorizationBodyDto' })

export const DeviceAuthorizationDto = z
  .object({
    deviceCode: z.string().describe('The device keeps this secret and polls POST /v1/device/tokens with it (256 bits, single use)'),
    userCode: z.string().regex(USER_CODE_SHOWN).describe(`${USER_CODE_LENGTH} characters of ${USER_CODE_ALPHABET}, shown as XXXX-XXXX`),
    verificationUri: z.url().describe("The console's device page"),
    verificationUriComplete: z.url().describe('The device page with the user code filled in'),
    expiresIn: z.int().min(1).describe('Seconds until both codes expire'),
    interval: z.int().min(1).describe('Seconds to wait between polls'),
  })
  .meta({ id: 'DeviceAuthorizationDto' })

export const DeviceTokenBodyDto = z
  .strictObject({
    deviceCode: z.string().min(1).max(256).describe('The deviceCode of POST /v1/device/authorizations'),
  })
  .meta({ id: 'DeviceTokenBodyDto' })

export const DeviceTokenDto = z
  .object({
    token: z.string().describe('A personal access token, answered once; only its SHA-256 is stored'),
    tokenType: z.literal('Bearer'),
    expiresAt: z.iso.datetime(),
    tenantId: z.uuid(),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'DeviceTokenDto' })

export const DeviceAuthorizationLookupQuery = z.strictObject({ userCode })

export const DeviceAuthorizationLookupDto = z
  .object({
    clientName: z.string(),
    scopes: z.array(z.string()),
    clientAddress: z.string().nullable().describe('The address the device asked from, as this server saw it'),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'DeviceAuthorizationLookupDto' })

export const ApproveDeviceAuthorizationBodyDto = z
  .strictObject({
    userCode,
    tenantId: z.uuid().describe('A tenant you are an active member of: the token acts there'),
  })
  .meta({ id: 'ApproveDeviceAuthorizationBodyDto' })

export const DenyDeviceAuthorizationBodyDto = z.strictObject({ userCode }).meta({ id: 'DenyDeviceAuthorizationBodyDto' })

export const DeviceAuthorizationDecisionDto = z
  .object({
    status: z.enum(['approved', 'denied']),
    clientName: z.string(),
    scopes: z.array(z.string()),
    tenantId: z.uuid().nullable().describe('The tenant approved for; null for a denial'),
  })
  .meta({ id: 'DeviceAuthorizationDecisionDto' })
