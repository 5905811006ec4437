import { useState } from "preact/hooks";
import { api, dapp, unwrap } from "../api/client";
import { type PaymasterView, useLoad } from "../api/paymasters";
import { Copyable, FormError, SelectField, TextField, useSubmit } from "../ui/forms";
import { connectWallet, depositFor, hasBrowserWallet, personalSign, walletChainId } from "../wallet";
import { formatEther, parseEther } from "../wei";

/**
 * The funding wallet: the message it signs (by a browser wallet, or signed elsewhere and pasted), and its deposit in
 * our verifying paymasters, with what unexpired sponsorships hold and what is left, and a deposit through the wallet.
 */
export function FundingTab({ paymaster, onLinked }: { paymaster: PaymasterView; onLinked: () => void }) {
  return (
    <>
      <section aria-labelledby="funding-wallet">
        <h2 id="funding-wallet">Funding wallet</h2>
        <p>
          Linked wallet:{" "}
          {paymaster.fundingWalletAddress ? <code>{paymaster.fundingWalletAddress}</code> : <strong>none yet</strong>}
        </p>
        <LinkWallet paymaster={paymaster} onLinked={onLinked} />
      </section>
      <Deposits paymaster={paymaster} />
      <DepositAlerts paymaster={paymaster} />
    </>
  );
}

const linkPath = "/api/v2/public/sdk/paymasterParameters" as const;

function LinkWallet({ paymaster, onLinked }: { paymaster: PaymasterView; onLinked: () => void }) {
  const [message, setMessage] = useState<string>();
  const [address, setAddress] = useState("");
  const [signature, setSignature] = useState("");
  const [linked, setLinked] = useState<string>();
  const form = useSubmit({ address: [], signature: ["Invalid signature"], paymasterId: ["Paymaster not found"] });

  const getMessage = () =>
    form.run(async () => {
      const data = await unwrap(
        api.GET("/api/v2/public/sdk/funding-message/{paymasterId}", {
          ...dapp(paymaster.apiKey),
          params: { path: { paymasterId: paymaster.paymasterId } },
        }),
      );
      setMessage(data.fundingMessage);
      setLinked(undefined);
    });

  const link = async (wallet: string, signed: string) => {
    const updated = await unwrap(
      api.PATCH(linkPath, {
        ...dapp(paymaster.apiKey),
        body: { paymasterId: paymaster.paymasterId, type: "paymasterFundingId", address: wallet, signature: signed },
      }),
    );
    setLinked(`Linked ${updated.fundingWalletAddress}.`);
    setMessage(undefined);
    setSignature("");
    onLinked();
  };

  const signInWallet = () =>
    form.run(async () => {
      if (!message) return;
      const account = await connectWallet();
      await link(account, await personalSign(message, account));
    });

  const submitPasted = (event: Event) => {
    event.preventDefault();
    void form.run(() => link(address.trim(), signature.trim()));
  };

  return (
    <>
      <p>
        To link a wallet, get a message, sign it with that wallet (EIP-191 <code>personal_sign</code>) and send the
        signature back. Only the latest message counts.
      </p>
      <button type="button" onClick={getMessage} disabled={form.busy}>
        Get the message to sign
      </button>
      <p aria-live="polite">{linked}</p>
      {message && (
        <>
          <Copyable label="Message to sign" text={message} code />
          {hasBrowserWallet() && (
            <p>
              <button type="button" onClick={signInWallet} disabled={form.busy}>
                Sign with browser wallet
              </button>
            </p>
          )}
          <form onSubmit={submitPasted} noValidate>
            <h3>Or paste a signature made elsewhere</h3>
            <TextField
              id="funding-address"
              label="Wallet address"
              value={address}
              onValue={setAddress}
              placeholder="0x…"
              spellcheck={false}
              error={form.errorOf("address")}
            />
            <TextField
              id="funding-signature"
              label="Signature"
              value={signature}
              onValue={setSignature}
              placeholder="0x…"
              spellcheck={false}
              error={form.errorOf("signature")}
            />
            <button type="submit" disabled={form.busy}>
              Link wallet
            </button>
          </form>
        </>
      )}
      <FormError message={form.formError ?? form.errorOf("paymasterId")} />
    </>
  );
}

function Deposits({ paymaster }: { paymaster: PaymasterView }) {
  const balance = useLoad(
    () =>
      unwrap(
        api.GET("/api/v2/public/sdk/funding-balance/{paymasterId}", {
          ...dapp(paymaster.apiKey),
          params: { path: { paymasterId: paymaster.paymasterId } },
        }),
      ),
    [paymaster.fundingWalletAddress],
  );
  return (
    <section aria-labelledby="deposits">
      <h2 id="deposits">Deposit</h2>
      {balance.error && (
        <p class="error" role="alert">
          {balance.error}
        </p>
      )}
      {balance.value && (
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">The funding wallet's deposit per EntryPoint version, in ether</caption>
            <thead>
              <tr>
                <th scope="col">EntryPoint</th>
                <th scope="col">Deposit</th>
                <th scope="col">Held by unexpired sponsorships</th>
                <th scope="col">Available</th>
              </tr>
            </thead>
            <tbody>
              {balance.value.entryPoints.map((entry) => (
                <tr key={entry.version}>
                  <th scope="row">v{entry.version}</th>
                  {entry.balance === null ? (
                    <td colSpan={3}>{entry.error}</td>
                  ) : (
                    <>
                      <td>{formatEther(entry.balance)} ETH</td>
                      <td>{formatEther(entry.held)} ETH</td>
                      <td>{formatEther(entry.available)} ETH</td>
                    </>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <button type="button" class="secondary" onClick={balance.reload}>
        Refresh
      </button>
      {balance.value && paymaster.fundingWalletAddress && hasBrowserWallet() && (
        <DepositForm
          paymaster={paymaster}
          versions={balance.value.entryPoints.filter((entry) => entry.verifyingPaymaster)}
          onDeposited={balance.reload}
        />
      )}
    </section>
  );
}

function DepositForm(props: {
  paymaster: PaymasterView;
  versions: { version: string; verifyingPaymaster: string | null }[];
  onDeposited: () => void;
}) {
  const [amount, setAmount] = useState("");
  const [version, setVersion] = useState("");
  const [sent, setSent] = useState<string>();
  const form = useSubmit({ amount: [] });
  const chosen = props.versions.find((entry) => entry.version === version) ?? props.versions[0];
  const submit = (event: Event) => {
    event.preventDefault();
    void form.run(async () => {
      const wei = parseEther(amount);
      if (wei === undefined || wei === 0n) throw new Error("amount must be a positive number of ether, e.g. 0.1");
      if (!chosen?.verifyingPaymaster) throw new Error("This chain has no verifying paymaster");
      const from = await connectWallet();
      const onChain = await walletChainId();
      if (onChain !== props.paymaster.chainId) {
        throw new Error(`The wallet is on chain ${onChain}: switch it to chain ${props.paymaster.chainId}`);
      }
      const hash = await depositFor({
        from,
        verifyingPaymaster: chosen.verifyingPaymaster,
        fundingWallet: props.paymaster.fundingWalletAddress as string,
        wei,
      });
      setSent(`Deposit sent: transaction ${hash}`);
      setAmount("");
      props.onDeposited();
    });
  };
  return (
    <form onSubmit={submit} noValidate>
      <h3>Deposit through the browser wallet</h3>
      <p class="hint">
        Calls <code>depositFor(funding wallet)</code> on the verifying paymaster; any wallet may pay it.
      </p>
      <SelectField
        id="deposit-version"
        label="EntryPoint version"
        value={chosen?.version ?? ""}
        onValue={setVersion}
        options={props.versions.map((entry) => ({ value: entry.version, label: `v${entry.version}` }))}
      />
      <TextField
        id="deposit-amount"
        label="Amount (ETH)"
        inputMode="decimal"
        value={amount}
        onValue={setAmount}
        error={form.errorOf("amount")}
      />
      <FormError message={form.formError} />
      <button type="submit" disabled={form.busy}>
        Deposit
      </button>
      <p aria-live="polite">{sent}</p>
    </form>
  );
}

/**
 * Where the service POSTs deposit.low (what is available fell below the threshold) and limit.reached alerts. The API
 * has no read of these settings, so the form sets them and says what it set.
 */
function DepositAlerts({ paymaster }: { paymaster: PaymasterView }) {
  const [url, setUrl] = useState("");
  const [threshold, setThreshold] = useState("");
  const [saved, setSaved] = useState<string>();
  const form = useSubmit({ url: [], thresholdWei: ["threshold"] });
  const save = (alertUrl: string | null) =>
    form.run(async () => {
      const wei = alertUrl === null ? 0n : parseEther(threshold);
      if (wei === undefined) throw new Error("thresholdWei must be a number of ether, e.g. 0.05");
      await unwrap(
        api.PATCH(linkPath, {
          ...dapp(paymaster.apiKey),
          body: {
            paymasterId: paymaster.paymasterId,
            type: "depositAlert",
            url: alertUrl,
            thresholdWei: wei.toString(),
          },
        }),
      );
      setSaved(alertUrl === null ? "Alerts are off." : `Alerts go to ${alertUrl} below ${formatEther(wei)} ETH.`);
    });
  const submit = (event: Event) => {
    event.preventDefault();
    void save(url.trim());
  };
  return (
    <section aria-labelledby="alerts">
      <h2 id="alerts">Deposit alerts</h2>
      <form onSubmit={submit} noValidate>
        <div class="row">
          <TextField
            id="alert-url"
            label="Alert URL"
            type="url"
            value={url}
            onValue={setUrl}
            placeholder="https://"
            error={form.errorOf("url")}
          />
          <TextField
            id="alert-threshold"
            label="Alert below (ETH available)"
            inputMode="decimal"
            value={threshold}
            onValue={setThreshold}
            error={form.errorOf("thresholdWei")}
          />
        </div>
        <FormError message={form.formError} />
        <div class="row">
          <button type="submit" disabled={form.busy}>
            Save alerts
          </button>
          <button type="button" class="secondary" disabled={form.busy} onClick={() => save(null)}>
            Turn alerts off
          </button>
        </div>
        <p aria-live="polite">{saved}</p>
      </form>
    </section>
  );
}
