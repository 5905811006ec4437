import { listChains, listPaymasters, type PaymasterView, useLoad } from "../api/paymasters";
import { href } from "../route";
import { ChainServes, FailedChecks } from "../ui/chainServes";
import { ActivityTab } from "./activity";
import { ContractsTab } from "./contracts";
import { EventsTab } from "./events";
import { FundingTab } from "./funding";
import { OverviewTab } from "./overview";
import { RulesTab } from "./rules";

const TABS = [
  ["overview", "Overview"],
  ["funding", "Funding"],
  ["contracts", "Contracts"],
  ["rules", "Rules"],
  ["activity", "Activity"],
  ["events", "Events"],
] as const;

/** One paymaster: its keys and snippets, funding, contracts, rules, activity and event endpoints, a tab each. */
export function PaymasterPage({ paymasterId, tab }: { paymasterId: string; tab: string }) {
  const paymasters = useLoad(listPaymasters);
  const chains = useLoad(listChains);
  if (paymasters.error)
    return (
      <p class="error" role="alert">
        {paymasters.error}
      </p>
    );
  if (!paymasters.value) return <p aria-busy="true">Loading…</p>;
  const paymaster = paymasters.value.find((candidate) => candidate.paymasterId === paymasterId);
  if (!paymaster) {
    return (
      <p>
        No such paymaster in this account. <a href="#/">Back to the paymasters</a>
      </p>
    );
  }
  const chain = chains.value?.find((candidate) => candidate.chainId === paymaster.chainId);
  return (
    <>
      <p class="crumbs">
        <a href="#/">Paymasters</a> / {paymaster.name}
      </p>
      <h1>
        {paymaster.name} <span class="muted">on {chain ? `${chain.name} (${chain.chainId})` : paymaster.chainId}</span>
      </h1>
      <p>
        EntryPoints served: <ChainServes chain={chain} />
      </p>
      <FailedChecks chain={chain} />
      <nav class="tabs" aria-label="Paymaster sections">
        {TABS.map(([id, label]) => (
          <a key={id} href={href("paymasters", paymasterId, id)} aria-current={tab === id ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <TabContent tab={tab} paymaster={paymaster} reload={paymasters.reload} />
    </>
  );
}

function TabContent({ tab, paymaster, reload }: { tab: string; paymaster: PaymasterView; reload: () => void }) {
  switch (tab) {
    case "funding":
      return <FundingTab paymaster={paymaster} onLinked={reload} />;
    case "contracts":
      return <ContractsTab paymaster={paymaster} />;
    case "rules":
      return <RulesTab paymaster={paymaster} />;
    case "activity":
      return <ActivityTab paymaster={paymaster} />;
    case "events":
      return <EventsTab paymaster={paymaster} />;
    default:
      return <OverviewTab paymaster={paymaster} onChange={reload} />;
  }
}
