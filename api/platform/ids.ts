const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Path ids are checked before they reach SQL, so a malformed one is a plain 404, not a database error. */
export const isUuid = (v: string): boolean => UUID.test(v)
