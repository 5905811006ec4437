/** The management API's success body: `statusCode`, `message` and, on some successes, `data`. */
export function success(message: string, data?: unknown) {
  return data === undefined ? { statusCode: 200, message } : { statusCode: 200, message, data };
}
