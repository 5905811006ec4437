// ERC-7677's sponsor: set per paymaster with PATCH paymasterParameters {type: "sponsorInfo", name, icon}, stored, shown
// in the paymaster list, and given in the stub's result (v0.6 and v0.7) until removed with a null name. A bad icon
// (not a data URI, another media type, data that is not the image it says, an SVG with a script, too long) is a 400
// naming the field and the problem, and changes nothing.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { MAX_SPONSOR_ICON_LENGTH } from "../../src/schemas/management/sponsorIconLimit";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { userOpV06, userOpV07 } from "../helpers/userOps";

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";
/** The 8-byte PNG signature and an IHDR start: enough for the check, which reads the signature. */
const PNG = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64")}`;
const WEBP = `data:image/webp;base64,${Buffer.from("RIFF\x1a\x00\x00\x00WEBPVP8L", "latin1").toString("base64")}`;
const SVG = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>').toString("base64")}`;
const SVG_TEXT = `data:image/svg+xml,${encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg"/>')}`;

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const patch = (dapp: Dapp, body: Record<string, unknown>) =>
  t.call("PATCH", "paymasterParameters", { token: dapp.token, apiKey: dapp.apiKey, body });

const stubV06 = (dapp: Dapp, nonce: number) =>
  rpc(t, dapp, "pm_getPaymasterStubData", [userOpV06(SENDER, nonce), ENTRY_POINT_V06_ADDRESS, "0x7a69", null]);
const stubV07 = (dapp: Dapp, nonce: number) =>
  rpc(t, dapp, "pm_getPaymasterStubData", [userOpV07(SENDER, nonce), ENTRY_POINT_V07_ADDRESS, "0x7a69", {}]);

async function listed(dapp: Dapp) {
  const reply = await t.call("GET", "paymasterParameters", { token: dapp.token });
  const paymasters = reply.body.data as { paymasterId: string; sponsor: unknown }[];
  return paymasters.find((paymaster) => paymaster.paymasterId === dapp.paymasterId)?.sponsor;
}

test("set, shown in the list and in every stub; replaced; removed with a null name", async () => {
  const dapp = await fundedDapp(t, { walletDeployment: true });
  assert.equal(await listed(dapp), null, "no sponsor until set");
  assert.equal((await stubV06(dapp, 0)).body.result.sponsor, undefined);

  const set = await patch(dapp, { paymasterId: dapp.paymasterId, type: "sponsorInfo", name: " Shop ", icon: PNG });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.equal(set.body.message, "Paymaster updated successfully");
  assert.deepEqual((set.body.data as { sponsor: unknown }).sponsor, { name: "Shop", icon: PNG });
  assert.deepEqual(await listed(dapp), { name: "Shop", icon: PNG });

  const v06 = await stubV06(dapp, 1);
  assert.equal(v06.status, 200, JSON.stringify(v06.body));
  assert.deepEqual(v06.body.result.sponsor, { name: "Shop", icon: PNG });
  assert.equal(v06.body.result.isFinal, false);
  const v07 = await stubV07(dapp, 2);
  assert.equal(v07.status, 200, JSON.stringify(v07.body));
  assert.deepEqual(v07.body.result.sponsor, { name: "Shop", icon: PNG });
  assert.match(v07.body.result.paymasterPostOpGasLimit, /^0x[0-9a-f]+$/, "always there for v0.7 and later");

  for (const icon of [WEBP, SVG, SVG_TEXT]) {
    const reply = await patch(dapp, { paymasterId: dapp.paymasterId, type: "sponsorInfo", name: "Shop", icon });
    assert.equal(reply.status, 200, `${icon.slice(0, 30)}: ${JSON.stringify(reply.body)}`);
  }
  await patch(dapp, { paymasterId: dapp.paymasterId, type: "sponsorInfo", name: "Shop only" });
  assert.deepEqual((await stubV06(dapp, 3)).body.result.sponsor, { name: "Shop only" }, "no icon: name alone");

  const removed = await patch(dapp, { paymasterId: dapp.paymasterId, type: "sponsorInfo", name: null });
  assert.equal(removed.status, 200, JSON.stringify(removed.body));
  assert.equal(await listed(dapp), null);
  assert.equal((await stubV06(dapp, 4)).body.result.sponsor, undefined);
});

test("a bad sponsorInfo: 400 naming the field and the problem, nothing changed; another paymaster's id: 404", async () => {
  const dapp = await fundedDapp(t, { walletDeployment: true });
  const other = await t.dapp();
  await patch(dapp, { paymasterId: dapp.paymasterId, type: "sponsorInfo", name: "Kept", icon: PNG });
  const body = (fields: Record<string, unknown>) => ({ paymasterId: dapp.paymasterId, type: "sponsorInfo", ...fields });
  const gif = `data:image/gif;base64,${Buffer.from("GIF89a").toString("base64")}`;
  const cases: [Record<string, unknown>, number, string | RegExp][] = [
    [body({ icon: PNG }), 400, "name is required"],
    [body({ name: "", icon: PNG }), 400, "name must not be empty"],
    [body({ name: "x".repeat(101) }), 400, /^name /],
    [body({ name: 5 }), 400, /^name /],
    [body({ name: "Shop", icon: 7 }), 400, /^icon /],
    [
      body({ name: "Shop", icon: "https://example.com/icon.png" }),
      400,
      "icon must be a PNG, WebP or SVG image as an RFC 2397 data URI (data:image/png;base64,…)",
    ],
    [
      body({ name: "Shop", icon: gif }),
      400,
      "icon has media type image/gif; only image/png, image/webp and image/svg+xml are accepted",
    ],
    [
      body({ name: "Shop", icon: `data:image/png;base64,${Buffer.from("not a png").toString("base64")}` }),
      400,
      "icon says image/png but its data is not a PNG image",
    ],
    [
      body({ name: "Shop", icon: "data:image/webp;base64,UklGRg==" }),
      400,
      "icon says image/webp but its data is not a WebP image",
    ],
    [body({ name: "Shop", icon: "data:image/png;base64,%%%%" }), 400, "icon: the base64 data is not valid base64"],
    [body({ name: "Shop", icon: "data:image/png;base64," }), 400, "icon has no image data after the comma"],
    [
      body({ name: "Shop", icon: `data:image/svg+xml,${encodeURIComponent("<svg><script>alert(1)</script></svg>")}` }),
      400,
      "icon: an SVG icon may not carry scripts, event handlers, javascript: links or foreignObject",
    ],
    [
      body({ name: "Shop", icon: `data:image/svg+xml,${encodeURIComponent('<svg onload="x()"/>')}` }),
      400,
      "icon: an SVG icon may not carry scripts, event handlers, javascript: links or foreignObject",
    ],
    [
      body({ name: "Shop", icon: "data:image/svg+xml,%3Cp%3Ehi%3C%2Fp%3E" }),
      400,
      "icon says image/svg+xml but its data has no <svg> element",
    ],
    [
      body({ name: "Shop", icon: `${PNG}${"A".repeat(MAX_SPONSOR_ICON_LENGTH)}` }),
      400,
      `icon is ${PNG.length + MAX_SPONSOR_ICON_LENGTH} characters long; at most ${MAX_SPONSOR_ICON_LENGTH} are accepted`,
    ],
    [
      body({ name: null, icon: PNG }),
      400,
      "icon is given with a null name: a sponsor's icon needs its name (ERC-7677 sponsor.name)",
    ],
    [{ ...body({ name: "Shop" }), paymasterId: other.paymasterId }, 404, /not found/i],
  ];
  for (const [sent, status, message] of cases) {
    const reply = await patch(dapp, sent);
    assert.equal(reply.status, status, `${JSON.stringify(sent).slice(0, 120)}: ${JSON.stringify(reply.body)}`);
    if (typeof message === "string") assert.equal(reply.body.message, message);
    else assert.match(String(reply.body.message), message);
  }
  assert.deepEqual(await listed(dapp), { name: "Kept", icon: PNG }, "nothing changed");
});
