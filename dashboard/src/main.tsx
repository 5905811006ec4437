import "./styles.css";
import { render } from "preact";
import { useState } from "preact/hooks";
import { AuditLogPage } from "./pages/auditLog";
import { PaymasterPage } from "./pages/paymaster";
import { PaymastersPage } from "./pages/paymasters";
import { SignIn } from "./pages/signIn";
import { useRoute } from "./route";
import { forgetToken, readToken } from "./session";

function App() {
  const [signedIn, setSignedIn] = useState(() => readToken() !== null);
  const route = useRoute();
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />;
  const signOut = () => {
    forgetToken();
    location.hash = "";
    setSignedIn(false);
  };
  const [section, paymasterId, tab] = route;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="#/">
          Paymaster dashboard
        </a>
        <nav aria-label="Account">
          <a href="#/audit">Audit log</a>
          <a href="/docs">API reference</a>
          <button type="button" class="secondary" onClick={signOut}>
            Sign out
          </button>
        </nav>
      </header>
      <main id="main">
        {section === "audit" ? (
          <AuditLogPage />
        ) : section === "paymasters" && paymasterId ? (
          <PaymasterPage paymasterId={paymasterId} tab={tab ?? "overview"} />
        ) : (
          <PaymastersPage />
        )}
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
