// The credential headers a management request must be refused with 401 for, before anything is read or written:
// missing ones (absent or empty, either or both) and wrong ones (unknown, or another dApp's beside this dApp's). The
// tests of each management resource send all of them, so the list is kept once, here. Both keys are always present
// (undefined for an absent header) so that spreading a set over a dApp's own credentials replaces both.
import type { Dapp } from "./app";

export interface Credentials {
  token: string | undefined;
  apiKey: string | undefined;
}

export function missingCredentials(dapp: Dapp): Credentials[] {
  return [
    { token: undefined, apiKey: undefined },
    { token: dapp.token, apiKey: undefined },
    { token: undefined, apiKey: dapp.apiKey },
    { token: "", apiKey: dapp.apiKey },
    { token: dapp.token, apiKey: "" },
    { token: "", apiKey: "" },
  ];
}

/** Present but wrong: `stranger` is another account's dApp. */
export function wrongCredentials(dapp: Dapp, stranger: Dapp): Credentials[] {
  return [
    { token: "pm_not-a-real-token", apiKey: dapp.apiKey },
    { token: dapp.token, apiKey: "not-a-real-api-key" },
    { token: stranger.token, apiKey: dapp.apiKey },
    { token: dapp.token, apiKey: stranger.apiKey },
  ];
}
