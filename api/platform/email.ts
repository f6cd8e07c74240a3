/** The domain of an address, lower-cased: what tenant claims, auth policies and SSO connections compare. */
export const domainOfEmail = (email: string): string =>
  email
    .slice(email.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase()
