import { useState } from "preact/hooks";
import { ApiFailure, api, unwrap } from "../api/client";
import { signInRefusal, TOKEN_MISSING } from "../api/signInRefusal";
import { forgetToken, saveToken } from "../session";
import { FormError, TextField, useSubmit } from "../ui/forms";

/** Sign-in with an account's authToken: it is checked by listing the account's paymasters, then kept for this tab. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [token, setToken] = useState("");
  const form = useSubmit({ token: ["auth token", "authToken"] });
  const submit = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      if (token.trim() === "") throw new Error(TOKEN_MISSING);
      saveToken(token.trim());
      try {
        await unwrap(api.GET("/api/v2/public/sdk/paymasterParameters"));
      } catch (error) {
        forgetToken();
        throw error instanceof ApiFailure
          ? new ApiFailure(error.status, signInRefusal(error.status, error.message))
          : error;
      }
      onSignedIn();
    });
  };
  return (
    <main id="main" class="sign-in">
      <h1>Paymaster dashboard</h1>
      <form onSubmit={submit} noValidate>
        <TextField
          id="token"
          label="Auth token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          value={token}
          onValue={setToken}
          error={form.errorOf("token")}
          hint="The account's authToken (pm_…), printed once at the first start or by npm run account."
        />
        <FormError message={form.formError} />
        <button type="submit" disabled={form.busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
