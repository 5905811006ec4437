/**
 * What the sign-in page says when the API refuses the token. The API answers a token it does not accept with the same
 * 401 as a missing header ("Auth token is required in the headers", the hosted API's words, which its clients
 * match), but at sign-in the person typed a token: a 401 there means that token was not accepted. Other refusals (429
 * after too many wrong tokens, an unreachable service) keep the API's own message.
 */
export const TOKEN_NOT_ACCEPTED =
  "This auth token was not accepted: check that it was copied whole, or make a new one with npm run account.";

export const TOKEN_MISSING = "Enter the auth token (pm_…).";

export const signInRefusal = (status: number, message: string): string =>
  status === 401 ? TOKEN_NOT_ACCEPTED : message;
