import createClient from "openapi-fetch";
import { readToken } from "../session";
import type { paths } from "./schema";

/** A refusal of the API: its status and its own message, shown as is. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The typed client of the documented management API (types generated from /openapi.json by `npm run dashboard:api`).
 * Every request carries the signed-in authToken; the apiKey is added per call by `dapp()`.
 */
export const api = createClient<paths>({ baseUrl: location.origin });
api.use({
  onRequest({ request }) {
    const token = readToken();
    if (token) request.headers.set("authToken", token);
    return request;
  },
});

/** The headers of a dApp's endpoints: its apiKey (the authToken is added to every request). */
export const dapp = (apiKey: string) => ({ headers: { apiKey } });

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** What a success carries in its envelope's `data`; undefined for the answers without it. */
type DataOf<Body> = Body extends { data: infer T } ? T : undefined;

/** The `data` of a success, or an ApiFailure with the API's own message. */
export async function unwrap<Body>(call: Promise<Answer<Body>>): Promise<DataOf<Body>> {
  let answer: Answer<Body>;
  try {
    answer = await call;
  } catch (error) {
    throw new ApiFailure(0, `The service did not answer: ${(error as Error).message}`);
  }
  if (answer.error !== undefined || !answer.response.ok) {
    const message = (answer.error as { message?: unknown } | undefined)?.message;
    throw new ApiFailure(
      answer.response.status,
      typeof message === "string" ? message : `The service answered ${answer.response.status}`,
    );
  }
  return (answer.data as { data?: unknown } | undefined)?.data as DataOf<Body>;
}
