/**
 * The authToken lives in this tab's session storage only: never in a URL, a cookie or a log, gone when the tab closes
 * or on "Sign out".
 */
const KEY = "paymaster-dashboard.authToken";

export const readToken = (): string | null => sessionStorage.getItem(KEY);
export const saveToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const forgetToken = (): void => sessionStorage.removeItem(KEY);
