import type { Database, Queryable } from "./database";

/**
 * The schema, one numbered step at a time. Steps are applied in order at start and never edited once released:
 * a change is a new step. Uniqueness lives here, in constraints, so that two service instances cannot race past it.
 */
const MIGRATIONS: { id: number; sql: string }[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE accounts (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE paymasters (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        name text NOT NULL,
        chain_id bigint NOT NULL,
        type text NOT NULL,
        version text NOT NULL,
        api_key text NOT NULL UNIQUE,
        funding_address text,
        funding_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT paymasters_name_per_chain UNIQUE (account_id, chain_id, name)
      );
      CREATE INDEX paymasters_by_account ON paymasters (account_id, created_at);
      CREATE TABLE smart_contracts (
        id uuid PRIMARY KEY,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        name text NOT NULL,
        address text NOT NULL CHECK (address = lower(address)),
        abi text NOT NULL,
        methods jsonb NOT NULL,
        whitelisted_methods jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT smart_contracts_address_per_paymaster UNIQUE (paymaster_id, address),
        CONSTRAINT smart_contracts_name_per_paymaster UNIQUE (paymaster_id, name)
      );
      CREATE TABLE policies (
        id uuid PRIMARY KEY,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        created_by uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        name text NOT NULL,
        policy_type text NOT NULL CHECK (policy_type IN ('PAYMASTER_SA_LIMIT', 'WEBHOOK', 'WALLET_DEPLOYMENT')),
        active boolean NOT NULL DEFAULT true,
        policy_data jsonb NOT NULL,
        cycle_start_ms bigint,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT policies_name_per_paymaster UNIQUE (paymaster_id, name)
      );
      CREATE TABLE webhooks (
        id uuid PRIMARY KEY,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        url text NOT NULL,
        request_type text NOT NULL CHECK (request_type IN ('GET', 'POST')),
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    id: 2,
    sql: `
      CREATE TABLE sponsorships (
        id uuid PRIMARY KEY,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        chain_id bigint NOT NULL,
        sender text NOT NULL,
        nonce numeric(78, 0) NOT NULL,
        sponsored boolean NOT NULL,
        reason text,
        user_op_hash text,
        call_gas_limit numeric(78, 0),
        verification_gas_limit numeric(78, 0),
        pre_verification_gas numeric(78, 0),
        max_fee_per_gas numeric(78, 0),
        max_priority_fee_per_gas numeric(78, 0),
        valid_until bigint,
        valid_after bigint,
        rule_outcomes jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX sponsorships_by_paymaster ON sponsorships (paymaster_id, created_at);
      CREATE INDEX sponsorships_by_user_op_hash ON sponsorships (user_op_hash) WHERE user_op_hash IS NOT NULL;
    `,
  },
  {
    id: 3,
    sql: `
      -- What each spending limit has used in a cycle, per sender for SMART_ACCOUNT limits ('' for PAYMASTER).
      CREATE TABLE limit_usage (
        policy_id uuid NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
        cycle_start_ms bigint NOT NULL,
        scope_key text NOT NULL,
        used numeric(78, 0) NOT NULL CHECK (used >= 0),
        PRIMARY KEY (policy_id, cycle_start_ms, scope_key)
      );
      -- The part of that usage each signed operation holds, so a repeated (sender, nonce) replaces its own.
      CREATE TABLE limit_reservations (
        policy_id uuid NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
        cycle_start_ms bigint NOT NULL,
        sender text NOT NULL,
        nonce numeric(78, 0) NOT NULL,
        scope_key text NOT NULL,
        amount numeric(78, 0) NOT NULL,
        valid_until bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (policy_id, cycle_start_ms, sender, nonce)
      );
    `,
  },
  {
    id: 4,
    sql: `
      -- Reserves spending limits for a batch of operations in one statement. Input: one JSON array per operation,
      -- holding its reservations {policyId, cycleStartMs, scopeKey, sender, nonce, amount, threshold, validUntil}.
      -- Output, per operation in order: {ok: true, previous: [amount it replaced or null, ...]} or
      -- {ok: false, index: the limit that refused, used: that limit's usage}.
      -- Every usage row of the batch is created if missing and locked in one fixed order before any is read, so
      -- concurrent batches on any number of instances neither overshoot a threshold nor deadlock. An operation's
      -- reservations are checked all, then applied all: all or none.
      CREATE FUNCTION reserve_limits(requests jsonb) RETURNS jsonb LANGUAGE plpgsql AS $fn$
      DECLARE
        request jsonb;
        r jsonb;
        results jsonb := '[]'::jsonb;
        previous numeric[];
        prev numeric;
        current_used numeric;
        refused integer;
        refused_used numeric;
        position integer;
      BEGIN
        INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used)
        SELECT DISTINCT (e->>'policyId')::uuid, (e->>'cycleStartMs')::bigint, e->>'scopeKey', 0
        FROM jsonb_array_elements(requests) AS q(req), jsonb_array_elements(q.req) AS e
        ORDER BY 1, 2, 3
        ON CONFLICT DO NOTHING;
        PERFORM 1 FROM limit_usage u
        WHERE (u.policy_id, u.cycle_start_ms, u.scope_key) IN (
          SELECT (e->>'policyId')::uuid, (e->>'cycleStartMs')::bigint, e->>'scopeKey'
          FROM jsonb_array_elements(requests) AS q(req), jsonb_array_elements(q.req) AS e)
        ORDER BY u.policy_id, u.cycle_start_ms, u.scope_key
        FOR UPDATE;

        FOR request IN SELECT value FROM jsonb_array_elements(requests) LOOP
          refused := NULL;
          previous := ARRAY[]::numeric[];
          position := 0;
          FOR r IN SELECT value FROM jsonb_array_elements(request) LOOP
            SELECT amount INTO prev FROM limit_reservations
            WHERE policy_id = (r->>'policyId')::uuid AND cycle_start_ms = (r->>'cycleStartMs')::bigint
              AND sender = r->>'sender' AND nonce = (r->>'nonce')::numeric;
            SELECT used INTO current_used FROM limit_usage
            WHERE policy_id = (r->>'policyId')::uuid AND cycle_start_ms = (r->>'cycleStartMs')::bigint
              AND scope_key = r->>'scopeKey';
            IF (r->>'amount')::numeric > (r->>'threshold')::numeric
               OR current_used + (r->>'amount')::numeric - COALESCE(prev, 0) > (r->>'threshold')::numeric THEN
              refused := position;
              refused_used := current_used;
              EXIT;
            END IF;
            previous := array_append(previous, prev);
            position := position + 1;
          END LOOP;
          IF refused IS NOT NULL THEN
            results := results || jsonb_build_array(jsonb_build_object('ok', false, 'index', refused, 'used', refused_used::text));
            CONTINUE;
          END IF;
          position := 0;
          FOR r IN SELECT value FROM jsonb_array_elements(request) LOOP
            position := position + 1;
            UPDATE limit_usage SET used = used + (r->>'amount')::numeric - COALESCE(previous[position], 0)
            WHERE policy_id = (r->>'policyId')::uuid AND cycle_start_ms = (r->>'cycleStartMs')::bigint
              AND scope_key = r->>'scopeKey';
            INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
            VALUES ((r->>'policyId')::uuid, (r->>'cycleStartMs')::bigint, r->>'sender', (r->>'nonce')::numeric,
                    r->>'scopeKey', (r->>'amount')::numeric, (r->>'validUntil')::bigint)
            ON CONFLICT (policy_id, cycle_start_ms, sender, nonce)
            DO UPDATE SET amount = EXCLUDED.amount, valid_until = EXCLUDED.valid_until;
          END LOOP;
          results := results || jsonb_build_array(jsonb_build_object('ok', true, 'previous', to_jsonb(previous::text[])));
        END LOOP;
        RETURN results;
      END
      $fn$;
    `,
  },
  {
    id: 5,
    sql: `
      -- Whose deposit a sponsorship spends and in which contract: the on-chain paymasterId (the funding wallet at the
      -- time of signing) and the chain's verifying paymaster, both lowercase.
      ALTER TABLE sponsorships
        ADD COLUMN funding_address text,
        ADD COLUMN paymaster_address text,
        -- Settlement, from the EntryPoint's UserOperationEvent of the operation.
        ADD COLUMN actual_cost numeric(78, 0),
        ADD COLUMN actual_gas_used numeric(78, 0),
        ADD COLUMN success boolean,
        ADD COLUMN tx_hash text,
        ADD COLUMN block_number bigint,
        ADD COLUMN settled_at timestamptz,
        -- Never paid: expired unmined, or another operation with the same sender and nonce was mined instead.
        ADD COLUMN released_at timestamptz;
      -- The sponsorships that may still be charged to a deposit: what the deposit rule sums and settlement scans.
      CREATE INDEX sponsorships_outstanding ON sponsorships (chain_id, funding_address, paymaster_address, valid_until)
        WHERE sponsored AND settled_at IS NULL AND released_at IS NULL;
      -- How far settlement has read each chain. genesis_hash tells a chain restarted from block 0 (a local node)
      -- from the one the cursor was written for.
      CREATE TABLE chain_cursors (
        chain_id bigint PRIMARY KEY,
        last_block bigint NOT NULL,
        genesis_hash text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    id: 6,
    sql: `
      -- What a sponsorship can cost its deposit at most (what the contract reserves in validation), on chains whose
      -- deposit is checked.
      ALTER TABLE sponsorships ADD COLUMN max_charge numeric(78, 0);
      -- The sum of max_charge of each deposit's sponsorships that are neither settled nor released, by the minute
      -- their validity ends (validUntil rounded up). The deposit check reads a handful of these rows instead of summing
      -- every outstanding sponsorship; the record adds to it, settlement and expiry take away.
      CREATE TABLE deposit_holds (
        chain_id bigint NOT NULL,
        paymaster_address text NOT NULL,
        funding_address text NOT NULL,
        valid_until_minute bigint NOT NULL,
        held numeric(78, 0) NOT NULL CHECK (held >= 0),
        PRIMARY KEY (chain_id, paymaster_address, funding_address, valid_until_minute)
      );
      -- Settlement's look-ups among unsettled sponsorships: expired ones per chain, other signatures of a mined nonce.
      DROP INDEX sponsorships_outstanding;
      CREATE INDEX sponsorships_unsettled_by_expiry ON sponsorships (chain_id, valid_until)
        WHERE sponsored AND settled_at IS NULL AND released_at IS NULL;
      CREATE INDEX sponsorships_unsettled_by_nonce ON sponsorships (chain_id, sender, nonce)
        WHERE sponsored AND settled_at IS NULL AND released_at IS NULL;
    `,
  },
  {
    id: 7,
    sql: `
      -- The contract and rule lists, whole or a page at a time, in creation order: an index range scan, no sort.
      CREATE INDEX smart_contracts_by_creation ON smart_contracts (paymaster_id, created_at, id);
      CREATE INDEX policies_by_creation ON policies (paymaster_id, created_at, id);
    `,
  },
  {
    id: 8,
    sql: `
      -- A number that grows with every change of what the sponsorship rules read about a paymaster (the paymaster row,
      -- its contracts, policies and webhooks), so that a cached setup is checked with one small query instead of being
      -- read again; triggers bump it, so every write path and every instance on the same database is covered.
      ALTER TABLE paymasters ADD COLUMN setup_version bigint NOT NULL DEFAULT 0;
      CREATE FUNCTION bump_paymaster_setup_version() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF NEW.setup_version = OLD.setup_version THEN
          NEW.setup_version := OLD.setup_version + 1;
        END IF;
        RETURN NEW;
      END;
      $fn$;
      CREATE TRIGGER paymasters_setup_version BEFORE UPDATE ON paymasters
        FOR EACH ROW EXECUTE FUNCTION bump_paymaster_setup_version();
      CREATE FUNCTION bump_setup_version_of_owner() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          UPDATE paymasters SET setup_version = setup_version + 1 WHERE id = OLD.paymaster_id;
          RETURN OLD;
        END IF;
        UPDATE paymasters SET setup_version = setup_version + 1 WHERE id = NEW.paymaster_id;
        IF TG_OP = 'UPDATE' AND OLD.paymaster_id <> NEW.paymaster_id THEN
          UPDATE paymasters SET setup_version = setup_version + 1 WHERE id = OLD.paymaster_id;
        END IF;
        RETURN NEW;
      END;
      $fn$;
      CREATE TRIGGER smart_contracts_setup_version AFTER INSERT OR UPDATE OR DELETE ON smart_contracts
        FOR EACH ROW EXECUTE FUNCTION bump_setup_version_of_owner();
      CREATE TRIGGER policies_setup_version AFTER INSERT OR UPDATE OR DELETE ON policies
        FOR EACH ROW EXECUTE FUNCTION bump_setup_version_of_owner();
      CREATE TRIGGER webhooks_setup_version AFTER INSERT OR UPDATE OR DELETE ON webhooks
        FOR EACH ROW EXECUTE FUNCTION bump_setup_version_of_owner();
    `,
  },
  {
    id: 9,
    sql: `
      -- The per-operation cost cap and the time window join the rule kinds.
      ALTER TABLE policies DROP CONSTRAINT policies_policy_type_check;
      ALTER TABLE policies ADD CONSTRAINT policies_policy_type_check CHECK (policy_type IN
        ('PAYMASTER_SA_LIMIT', 'WEBHOOK', 'WALLET_DEPLOYMENT', 'MAX_COST_PER_OP', 'TIME_WINDOW'));
    `,
  },
  {
    id: 10,
    sql: `
      -- A dApp can pause its whole paymaster: every sponsorship request is refused until it resumes.
      ALTER TABLE paymasters ADD COLUMN active boolean NOT NULL DEFAULT true;
    `,
  },
  {
    id: 11,
    sql: `
      -- Alerts (docs/alerts.md): where a paymaster wants them and below which available deposit.
      CREATE TABLE alert_settings (
        paymaster_id uuid PRIMARY KEY REFERENCES paymasters (id) ON DELETE CASCADE,
        threshold_wei numeric(78, 0) NOT NULL CHECK (threshold_wei >= 0),
        url text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      -- Whether the available deposit of a paymaster in one verifying paymaster (one per EntryPoint version) is below
      -- the threshold now: deposit.low is sent when this flips to true, and armed again when it flips back.
      CREATE TABLE deposit_alert_state (
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        paymaster_address text NOT NULL,
        below boolean NOT NULL,
        PRIMARY KEY (paymaster_id, paymaster_address)
      );
      -- One limit.reached per spending limit and cycle: the insert that wins sends it.
      CREATE TABLE limit_alerts (
        policy_id uuid NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
        cycle_start_ms bigint NOT NULL,
        PRIMARY KEY (policy_id, cycle_start_ms)
      );
      -- The alerts to deliver, durable so that a restart loses none; an instance claims a row before it sends it.
      CREATE TABLE alert_outbox (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        event text NOT NULL,
        url text NOT NULL,
        body text NOT NULL,
        created_ms bigint NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_ms bigint NOT NULL,
        claimed_until_ms bigint NOT NULL DEFAULT 0,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
        last_error text
      );
      CREATE INDEX alert_outbox_due ON alert_outbox (next_attempt_ms) WHERE state = 'pending';
    `,
  },
  {
    id: 12,
    sql: `
      -- The native token's dollar price a USD rule used for this answer (dollars per whole token, exact): the record
      -- of what the USD amounts were computed at, and the rate settlement turns the actual cost into dollars with.
      ALTER TABLE sponsorships ADD COLUMN native_usd_price numeric;
    `,
  },
  {
    id: 13,
    sql: `
      -- The sender allowlist and blocklist join the rule kinds.
      ALTER TABLE policies DROP CONSTRAINT policies_policy_type_check;
      ALTER TABLE policies ADD CONSTRAINT policies_policy_type_check CHECK (policy_type IN
        ('PAYMASTER_SA_LIMIT', 'WEBHOOK', 'WALLET_DEPLOYMENT', 'MAX_COST_PER_OP', 'TIME_WINDOW',
         'SENDER_ALLOWLIST', 'SENDER_BLOCKLIST'));
    `,
  },
  {
    id: 14,
    sql: `
      -- The ledger (GET /sponsorships): which EntryPoint an operation was signed for, in which mode (SPONSORED or
      -- ERC20), and the most it can cost in wei whatever the chain (max_charge is kept only where a deposit is
      -- checked). Rows written before this step keep null here.
      ALTER TABLE sponsorships
        ADD COLUMN entry_point text,
        ADD COLUMN mode text CHECK (mode IN ('SPONSORED', 'ERC20')),
        ADD COLUMN worst_case_wei numeric(78, 0);
      -- The ledger's pages, newest first per paymaster, and the same for one sender: each an index range scan that
      -- stops after a page. The first replaces sponsorships_by_paymaster (same leading columns, read backwards for
      -- the oldest-first listing).
      CREATE INDEX sponsorships_ledger ON sponsorships (paymaster_id, created_at DESC, id DESC);
      CREATE INDEX sponsorships_ledger_by_sender ON sponsorships (paymaster_id, sender, created_at DESC, id DESC);
      -- Pending rows are few and recent among a paymaster's million: the ledger's "pending" page reads them here rather
      -- than walking the whole ledger for a page it cannot fill. Rows leave it once settled or released.
      CREATE INDEX sponsorships_ledger_open ON sponsorships (paymaster_id, created_at DESC, id DESC)
        WHERE sponsored AND settled_at IS NULL AND released_at IS NULL;
      DROP INDEX sponsorships_by_paymaster;
    `,
  },
  {
    id: 15,
    sql: `
      -- Each instance keeps the accounts and paymasters that tokens and apiKeys name in memory (the credential cache).
      -- Every change of what it keeps, by any writer (an instance, the account command, an operator's SQL), notifies
      -- the account's id on one channel when it commits, so that every instance listening forgets that account at
      -- once. A revoked token is a NULL hash: no token hashes to it.
      -- Notifications reach every session of the database, whatever its schema: the payload names the schema of the
      -- changed table ("schema:accountId") so that instances on other schemas of one database ignore it.
      ALTER TABLE accounts ALTER COLUMN token_hash DROP NOT NULL;
      CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF TG_TABLE_NAME = 'accounts' THEN
          PERFORM pg_notify('paymaster_credentials', TG_TABLE_SCHEMA || ':' || OLD.id::text);
        ELSE
          PERFORM pg_notify('paymaster_credentials', TG_TABLE_SCHEMA || ':' || OLD.account_id::text);
          IF TG_OP = 'UPDATE' AND NEW.account_id <> OLD.account_id THEN
            PERFORM pg_notify('paymaster_credentials', TG_TABLE_SCHEMA || ':' || NEW.account_id::text);
          END IF;
        END IF;
        RETURN NULL;
      END;
      $fn$;
      CREATE TRIGGER accounts_credentials_changed AFTER UPDATE OR DELETE ON accounts
        FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER paymasters_credentials_deleted AFTER DELETE ON paymasters
        FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed();
      -- Only the columns the management API's guard returns: the setup_version bumps of every contract write do not.
      CREATE TRIGGER paymasters_credentials_changed AFTER UPDATE ON paymasters
        FOR EACH ROW WHEN ((OLD.account_id, OLD.name, OLD.chain_id, OLD.type, OLD.version, OLD.api_key,
          OLD.funding_address, OLD.active) IS DISTINCT FROM (NEW.account_id, NEW.name, NEW.chain_id, NEW.type,
          NEW.version, NEW.api_key, NEW.funding_address, NEW.active))
        EXECUTE FUNCTION notify_credentials_changed();
    `,
  },
  {
    id: 16,
    sql: `
      -- The limits' reservation on PostgreSQL reads, in one round trip, what its arithmetic needs (src/storage/
      -- reserveLimits.ts): the batch's usage rows, locked in the fixed order (created first when some are missing),
      -- then the reservations its (sender, nonce) already hold. Each statement of a VOLATILE function takes its own
      -- snapshot, so the held reservations are read after the locks are taken, as when they were separate statements.
      -- Rows come back tagged 'usage' (key: the scope key, amount: used) or 'held' (key: the sender); a usage row may
      -- come twice when some had to be created, with the same values (the lock is held).
      --
      -- The keys sorted, then each usage row looked up by primary key and locked in turn: the order settlement locks
      -- them in too, so concurrent batches never wait on each other in a cycle.
      CREATE FUNCTION lock_limit_usage(policy_ids uuid[], cycle_starts bigint[], scope_keys text[])
      RETURNS TABLE (policy_id text, cycle_start_ms text, scope_key text, used text)
      LANGUAGE sql VOLATILE AS $fn$
        SELECT u.policy_id::text, u.cycle_start_ms::text, u.scope_key, u.used::text
        FROM (SELECT DISTINCT * FROM unnest(policy_ids, cycle_starts, scope_keys) ORDER BY 1, 2, 3)
          AS k(policy_id, cycle_start_ms, scope_key)
        JOIN LATERAL (
          SELECT * FROM limit_usage u
          WHERE u.policy_id = k.policy_id AND u.cycle_start_ms = k.cycle_start_ms AND u.scope_key = k.scope_key
          FOR UPDATE) u ON true
      $fn$;
      CREATE FUNCTION lock_limit_usage_and_read_held(
        policy_ids uuid[], cycle_starts bigint[], scope_keys text[], senders text[], nonces numeric[]
      ) RETURNS TABLE (row_kind text, row_policy text, row_cycle text, row_key text, row_nonce text, row_amount text)
      LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        wanted integer;
        locked integer;
      BEGIN
        SELECT count(*) INTO wanted FROM (SELECT DISTINCT * FROM unnest(policy_ids, cycle_starts, scope_keys)) k;
        RETURN QUERY SELECT 'usage', l.policy_id, l.cycle_start_ms, l.scope_key, NULL::text, l.used
          FROM lock_limit_usage(policy_ids, cycle_starts, scope_keys) l;
        GET DIAGNOSTICS locked = ROW_COUNT;
        IF locked < wanted THEN
          INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used)
          SELECT DISTINCT k.policy_id, k.cycle_start_ms, k.scope_key, 0::numeric
          FROM unnest(policy_ids, cycle_starts, scope_keys) AS k(policy_id, cycle_start_ms, scope_key)
          ORDER BY 1, 2, 3
          ON CONFLICT DO NOTHING;
          RETURN QUERY SELECT 'usage', l.policy_id, l.cycle_start_ms, l.scope_key, NULL::text, l.used
            FROM lock_limit_usage(policy_ids, cycle_starts, scope_keys) l;
        END IF;
        RETURN QUERY
          SELECT 'held', r.policy_id::text, r.cycle_start_ms::text, r.sender, r.nonce::text, r.amount::text
          FROM (SELECT DISTINCT * FROM unnest(policy_ids, cycle_starts, senders, nonces))
            AS k(policy_id, cycle_start_ms, sender, nonce)
          JOIN LATERAL (
            SELECT * FROM limit_reservations r
            WHERE r.policy_id = k.policy_id AND r.cycle_start_ms = k.cycle_start_ms AND r.sender = k.sender
              AND r.nonce = k.nonce
            OFFSET 0) r ON true;
      END;
      $fn$;
    `,
  },
  {
    id: 17,
    sql: `
      -- ERC-7677's sponsor of a paymaster: the name and icon (an RFC 2397 data URI, checked and bounded by the
      -- management API) wallets show for the stub's sponsor field. An update bumps setup_version like any other.
      ALTER TABLE paymasters ADD COLUMN sponsor_name text, ADD COLUMN sponsor_icon text;
      ALTER TABLE paymasters ADD CONSTRAINT paymasters_sponsor_icon_needs_name
        CHECK (sponsor_icon IS NULL OR sponsor_name IS NOT NULL);
    `,
  },
  {
    id: 18,
    sql: `
      -- The gas-price cap and the request quota join the rule kinds.
      ALTER TABLE policies DROP CONSTRAINT policies_policy_type_check;
      ALTER TABLE policies ADD CONSTRAINT policies_policy_type_check CHECK (policy_type IN
        ('PAYMASTER_SA_LIMIT', 'WEBHOOK', 'WALLET_DEPLOYMENT', 'MAX_COST_PER_OP', 'TIME_WINDOW',
         'SENDER_ALLOWLIST', 'SENDER_BLOCKLIST', 'MAX_GAS_PRICE', 'RATE_LIMIT'));
    `,
  },
  {
    id: 19,
    sql: `
      -- RATE_LIMIT quotas shared by every instance on one PostgreSQL (src/storage/quotaCounter.ts): requests counted
      -- per rule, fixed window and scope key (a client address, a sender or an origin). Unlogged: a count is worth
      -- nothing after its window, so a crash may lose it rather than every request paying for its WAL. No foreign
      -- key: a row outlives its rule by one window at most (expired rows are swept), and a check per request would
      -- cost more than the row. PGlite keeps the counts in the process instead and leaves this table empty.
      CREATE UNLOGGED TABLE quota_counts (
        policy_id uuid NOT NULL,
        window_start_ms bigint NOT NULL,
        scope_key text NOT NULL,
        expires_ms bigint NOT NULL,
        hits bigint NOT NULL,
        PRIMARY KEY (policy_id, window_start_ms, scope_key)
      );
      CREATE INDEX quota_counts_expiry ON quota_counts (expires_ms);
    `,
  },
  {
    id: 20,
    sql: `
      -- The web origins a paymaster's RPC URL answers browsers from (lower case, an empty list: any origin), and
      -- whether calls without an Origin header (servers, bundlers) are refused. Changing them bumps setup_version
      -- (migration 8's trigger), so every instance's cached setup follows.
      ALTER TABLE paymasters
        ADD COLUMN allowed_origins jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN require_origin boolean NOT NULL DEFAULT false;
    `,
  },
  {
    id: 21,
    sql: `
      -- An account holds several named tokens, each with a scope: "admin" may change everything, "read" may only read.
      -- The token the account command creates with the account is its first token, always admin. Tokens are kept as
      -- SHA-256 hashes, as the single account token was; a revoked token's row is deleted. Times are milliseconds of
      -- the service's clock (created, last used at most once a minute, expiry).
      CREATE TABLE account_tokens (
        id uuid PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        name text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('admin', 'read')),
        token_hash text NOT NULL UNIQUE,
        first boolean NOT NULL DEFAULT false,
        created_ms bigint NOT NULL,
        expires_ms bigint,
        last_used_ms bigint,
        CONSTRAINT account_tokens_name_per_account UNIQUE (account_id, name),
        CONSTRAINT account_tokens_first_is_admin CHECK (NOT first OR scope = 'admin')
      );
      CREATE UNIQUE INDEX account_tokens_one_first ON account_tokens (account_id) WHERE first;
      INSERT INTO account_tokens (id, account_id, name, scope, token_hash, first, created_ms)
        SELECT gen_random_uuid(), id, 'first', 'admin', token_hash, true,
          (extract(epoch FROM created_at) * 1000)::bigint
        FROM accounts WHERE token_hash IS NOT NULL;
      ALTER TABLE accounts DROP COLUMN token_hash;
      -- The credential caches forget the account when one of its tokens is revoked or changed (not when only its
      -- last use is noted).
      CREATE TRIGGER account_tokens_credentials_deleted AFTER DELETE ON account_tokens
        FOR EACH ROW EXECUTE FUNCTION notify_credentials_changed();
      CREATE TRIGGER account_tokens_credentials_changed AFTER UPDATE ON account_tokens
        FOR EACH ROW WHEN ((OLD.token_hash, OLD.scope, OLD.expires_ms, OLD.name, OLD.account_id)
          IS DISTINCT FROM (NEW.token_hash, NEW.scope, NEW.expires_ms, NEW.name, NEW.account_id))
        EXECUTE FUNCTION notify_credentials_changed();
    `,
  },
  {
    id: 22,
    sql: `
      -- apiKey rotation with a grace period: the replaced key keeps naming its paymaster until previous_api_key_until_ms
      -- (the service's clock). Only one previous key: a second rotation ends the first one's grace. The rotation
      -- changes api_key, so migration 15's trigger tells every instance's credential cache.
      ALTER TABLE paymasters ADD COLUMN previous_api_key text UNIQUE;
      ALTER TABLE paymasters ADD COLUMN previous_api_key_until_ms bigint;
    `,
  },
  {
    id: 23,
    sql: `
      -- The audit log: one entry per management write that succeeded. The service inserts the entry first in the
      -- write's transaction and names it in the transaction-local setting paymaster.audit_entry; the triggers below
      -- add each row the write changed to it, so a change and its entry commit together or not at all. Outside such a
      -- transaction (sponsorships, the account command, migrations) the triggers do nothing.
      CREATE TABLE audit_log (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at_ms bigint NOT NULL,
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        -- No reference: an entry outlives the revocation of the token that made it, with its id and name.
        token_id uuid,
        token_name text,
        client_address text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        paymaster_id uuid,
        target jsonb NOT NULL,
        changes jsonb NOT NULL DEFAULT '[]'::jsonb
      );
      CREATE INDEX audit_log_by_account ON audit_log (account_id, id DESC);
      CREATE INDEX audit_log_by_paymaster ON audit_log (paymaster_id, id DESC);
      -- A URL may carry credentials in its user part or its query: both are masked.
      CREATE FUNCTION audit_masked_url(url text) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
        SELECT regexp_replace(regexp_replace(url, '^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#@]*@', '\\1***@'),
          '[?#].*$', '?***')
      $fn$;
      -- A row as the log shows it: secrets masked (keys, token hashes, URLs' credentials), bookkeeping left out.
      CREATE FUNCTION audit_row_view(item jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE
        key text;
      BEGIN
        item := item - 'setup_version' - 'funding_message' - 'last_used_ms';
        FOREACH key IN ARRAY ARRAY['api_key', 'previous_api_key', 'token_hash', 'secret'] LOOP
          IF item ? key AND item->key <> 'null'::jsonb THEN item := jsonb_set(item, ARRAY[key], '"***"'); END IF;
        END LOOP;
        FOREACH key IN ARRAY ARRAY['url', 'webhook_url'] LOOP
          IF jsonb_typeof(item->key) = 'string' THEN
            item := jsonb_set(item, ARRAY[key], to_jsonb(audit_masked_url(item->>key)));
          END IF;
        END LOOP;
        IF jsonb_typeof(item->'policy_data'->'url') = 'string' THEN
          item := jsonb_set(item, '{policy_data,url}', to_jsonb(audit_masked_url(item->'policy_data'->>'url')));
        END IF;
        RETURN item;
      END;
      $fn$;
      CREATE FUNCTION audit_row_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
      DECLARE
        entry text := current_setting('paymaster.audit_entry', true);
        old_row jsonb := to_jsonb(OLD);
        new_row jsonb := to_jsonb(NEW);
        row_now jsonb := coalesce(to_jsonb(NEW), to_jsonb(OLD));
        unchanged text[];
        before jsonb;
        after jsonb;
        owner text;
      BEGIN
        IF entry IS NULL OR entry = '' THEN RETURN NULL; END IF;
        IF TG_OP = 'UPDATE' THEN
          -- The fields that changed, compared before masking (a rotated key is a change even though both show ***),
          -- with the row's id to name it. None left once bookkeeping is set aside: nothing to log.
          -- (Removing the unchanged keys, not aggregating the changed ones: jsonb_object_agg takes minutes on a
          -- rule holding 100,000 addresses.)
          SELECT coalesce(array_agg(k), '{}'::text[]) INTO unchanged
          FROM jsonb_object_keys(new_row) AS k WHERE old_row->k IS NOT DISTINCT FROM new_row->k;
          after := audit_row_view(new_row - unchanged);
          IF after = '{}'::jsonb THEN RETURN NULL; END IF;
          before := jsonb_build_object('id', old_row->'id') || audit_row_view(old_row - unchanged);
          after := jsonb_build_object('id', new_row->'id') || after;
        ELSIF TG_OP = 'INSERT' THEN
          after := audit_row_view(new_row);
        ELSE
          before := audit_row_view(old_row);
        END IF;
        owner := CASE WHEN TG_TABLE_NAME = 'paymasters' THEN row_now->>'id' ELSE row_now->>'paymaster_id' END;
        UPDATE audit_log
        SET changes = changes || jsonb_build_array(jsonb_build_object(
              'table', TG_TABLE_NAME, 'operation', lower(TG_OP), 'before', before, 'after', after)),
            paymaster_id = coalesce(paymaster_id, owner::uuid)
        WHERE id = entry::bigint;
        RETURN NULL;
      END;
      $fn$;
      CREATE TRIGGER paymasters_audit AFTER INSERT OR UPDATE OR DELETE ON paymasters
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
      CREATE TRIGGER smart_contracts_audit AFTER INSERT OR UPDATE OR DELETE ON smart_contracts
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
      CREATE TRIGGER policies_audit AFTER INSERT OR UPDATE OR DELETE ON policies
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
      CREATE TRIGGER webhooks_audit AFTER INSERT OR UPDATE OR DELETE ON webhooks
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
      CREATE TRIGGER alert_settings_audit AFTER INSERT OR UPDATE OR DELETE ON alert_settings
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
      CREATE TRIGGER account_tokens_audit AFTER INSERT OR UPDATE OR DELETE ON account_tokens
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
    `,
  },
  {
    id: 24,
    sql: `
      -- EntryPoint v0.9 parallel signing (src/storage/signatureCommitments.ts): the paymaster signature made at the
      -- "commit" step, kept until the "finalize" step gives it out for the same operation (same user operation hash).
      -- One per (chain, EntryPoint, sender, nonce): a new commit for the same operation replaces the old one. A row past
      -- valid_until is dead: its signature was never given out, and settlement releases its sponsorship's reservation
      -- at that time like any unmined one's.
      CREATE TABLE signature_commitments (
        chain_id bigint NOT NULL,
        entry_point text NOT NULL,
        sender text NOT NULL,
        nonce numeric(78, 0) NOT NULL,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        user_op_hash text NOT NULL,
        paymaster_signature text NOT NULL,
        valid_until bigint NOT NULL,
        PRIMARY KEY (chain_id, entry_point, sender, nonce)
      );
      CREATE INDEX signature_commitments_valid_until ON signature_commitments (valid_until);
    `,
  },
  {
    id: 25,
    sql: `
      -- How many blocks an EntryPoint v0.9 signature of this paymaster stays valid (a window in block numbers, bit 47
      -- of validAfter and validUntil set); null: windows in seconds, as every earlier EntryPoint reads them. Changing it
      -- bumps setup_version (migration 8's trigger), so every instance's cached setup follows.
      ALTER TABLE paymasters ADD COLUMN validity_blocks integer
        CHECK (validity_blocks IS NULL OR validity_blocks BETWEEN 1 AND 100000);
    `,
  },
  {
    id: 26,
    sql: `
      -- The L1 data fee's part of a sponsorship's preVerificationGas, in gas, where the service estimated the gas on a
      -- rollup (0 on a chain without an L1 fee); null where the client's gas was signed as sent, and on older rows.
      ALTER TABLE sponsorships ADD COLUMN l1_data_gas numeric(78, 0);
    `,
  },
  {
    id: 27,
    sql: `
      -- A parallel-signing commitment is its paymaster's. Keyed by the operation alone (migration 24), a commit by a
      -- paymaster of another account for the same sender and nonce (both public) replaced the first paymaster's, whose
      -- finalize then found nothing. With paymaster_id in the key each paymaster keeps its own. The rows already kept
      -- are unique on the old key, hence on the wider one: they stay as they are.
      ALTER TABLE signature_commitments DROP CONSTRAINT signature_commitments_pkey;
      ALTER TABLE signature_commitments ADD PRIMARY KEY (chain_id, entry_point, sender, nonce, paymaster_id);
    `,
  },
  {
    id: 28,
    sql: `
      -- Event endpoints (docs/events.md): where a paymaster's events are pushed, signed as Standard Webhooks. The
      -- secrets are sealed (AES-256-GCM under a key derived from the webhook signing key), never kept in clear; during
      -- a rotation's grace period the previous one signs too, until previous_secret_until_ms (the service's clock).
      -- disabled_reason: why the service turned the endpoint off (it failed for a day); null otherwise.
      CREATE TABLE event_endpoints (
        id uuid PRIMARY KEY,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        url text NOT NULL,
        events text[] NOT NULL,
        description text,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason text,
        secret text NOT NULL,
        previous_secret text,
        previous_secret_until_ms bigint,
        created_ms bigint NOT NULL
      );
      CREATE INDEX event_endpoints_by_paymaster ON event_endpoints (paymaster_id);
      -- Where delivery to an endpoint stands, apart from the endpoint so that delivery's frequent writes touch no row
      -- the management API audits: the last sequence number given out, when the head of its queue is next due, since
      -- when it has been failing, and the lease of the instance delivering to it (one at a time, so in order).
      CREATE TABLE event_endpoint_progress (
        endpoint_id uuid PRIMARY KEY REFERENCES event_endpoints (id) ON DELETE CASCADE,
        last_sequence bigint NOT NULL DEFAULT 0,
        next_attempt_ms bigint NOT NULL DEFAULT 0,
        failing_since_ms bigint,
        lease_until_ms bigint NOT NULL DEFAULT 0,
        lease_token uuid
      );
      -- The outbox: one row per fact (a sponsorship signed, included, reverted or expired; a deposit low; a limit
      -- reached), written in the transaction of the fact itself, when an endpoint of the paymaster subscribes to it.
      CREATE TABLE events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        event_id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
        paymaster_id uuid NOT NULL REFERENCES paymasters (id) ON DELETE CASCADE,
        chain_id bigint NOT NULL,
        type text NOT NULL,
        data jsonb NOT NULL,
        at_ms bigint NOT NULL
      );
      CREATE INDEX events_by_paymaster ON events (paymaster_id, at_ms);
      -- One fact to one endpoint. The sequence is given when delivery first sees the row (in id order, among the rows
      -- committed by then), so that rows committed out of id order still go out in one order that never changes.
      CREATE TABLE event_deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        endpoint_id uuid NOT NULL REFERENCES event_endpoints (id) ON DELETE CASCADE,
        event_id bigint NOT NULL REFERENCES events (id) ON DELETE CASCADE,
        sequence bigint,
        attempts integer NOT NULL DEFAULT 0,
        delivered_ms bigint
      );
      CREATE INDEX event_deliveries_unsequenced ON event_deliveries (endpoint_id, id) WHERE sequence IS NULL;
      CREATE INDEX event_deliveries_pending ON event_deliveries (endpoint_id, sequence) WHERE delivered_ms IS NULL;
      CREATE INDEX event_deliveries_by_event ON event_deliveries (event_id);
      -- Every attempt, for the dApp to look into: its outcome, the answer's status and how long it took.
      CREATE TABLE event_attempts (
        id uuid PRIMARY KEY,
        endpoint_id uuid NOT NULL REFERENCES event_endpoints (id) ON DELETE CASCADE,
        delivery_id bigint NOT NULL,
        event_id uuid NOT NULL,
        type text NOT NULL,
        sequence bigint NOT NULL,
        attempt integer NOT NULL,
        delivered boolean NOT NULL,
        status_code integer,
        error text,
        duration_ms integer NOT NULL,
        at_ms bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX event_attempts_by_endpoint ON event_attempts (endpoint_id, created_at DESC, id DESC);
      -- Delivery wakes up at once, on every instance, when a transaction queued something (a statement's rows, once).
      CREATE FUNCTION notify_event_deliveries() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF EXISTS (SELECT 1 FROM queued) THEN
          PERFORM pg_notify('paymaster_events', TG_TABLE_SCHEMA || ':queued');
        END IF;
        RETURN NULL;
      END;
      $fn$;
      CREATE TRIGGER event_deliveries_queued AFTER INSERT ON event_deliveries REFERENCING NEW TABLE AS queued
        FOR EACH STATEMENT EXECUTE FUNCTION notify_event_deliveries();
      CREATE TRIGGER event_endpoints_audit AFTER INSERT OR UPDATE OR DELETE ON event_endpoints
        FOR EACH ROW EXECUTE FUNCTION audit_row_change();
      -- The audit log masks the previous secret of a rotation too.
      CREATE OR REPLACE FUNCTION audit_row_view(item jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE
        key text;
      BEGIN
        item := item - 'setup_version' - 'funding_message' - 'last_used_ms';
        FOREACH key IN ARRAY ARRAY['api_key', 'previous_api_key', 'token_hash', 'secret', 'previous_secret'] LOOP
          IF item ? key AND item->key <> 'null'::jsonb THEN item := jsonb_set(item, ARRAY[key], '"***"'); END IF;
        END LOOP;
        FOREACH key IN ARRAY ARRAY['url', 'webhook_url'] LOOP
          IF jsonb_typeof(item->key) = 'string' THEN
            item := jsonb_set(item, ARRAY[key], to_jsonb(audit_masked_url(item->>key)));
          END IF;
        END LOOP;
        IF jsonb_typeof(item->'policy_data'->'url') = 'string' THEN
          item := jsonb_set(item, '{policy_data,url}', to_jsonb(audit_masked_url(item->'policy_data'->>'url')));
        END IF;
        RETURN item;
      END;
      $fn$;
    `,
  },
  {
    id: 29,
    sql: `
      -- ERC20 mode's outcome in the fee token's base units, from the token paymaster's TokenCharged once settled: what
      -- the sender paid in the end, and, from the up-front token paymaster (which takes the maximum in validation),
      -- what postOp gave back of it (0 from the approve-in-batch paymaster, which refunds nothing). Null otherwise.
      ALTER TABLE sponsorships ADD COLUMN token_charge numeric(78, 0), ADD COLUMN token_refund numeric(78, 0);
    `,
  },
  {
    id: 30,
    sql: `
      -- A PostgreSQL batch's spending limits reserved inside the statement that records it (src/storage/
      -- sponsorships.ts), called outside any explicit transaction: no BEGIN, no COMMIT, one round trip. The locks are
      -- taken as migration 16's lock_limit_usage takes them (the keys sorted, each row by primary key, missing ones
      -- created at zero first), so this never waits in a cycle with lock_limit_usage_and_read_held, which an older
      -- build's instance may still call, nor with settlement. Its query is repeated here rather than called: a SQL
      -- function's query is parsed and planned again on every call, a PL/pgSQL one's once per session. The arithmetic is reserveLimits.ts's: per operation in order, each reservation fits if amount <=
      -- threshold and used + amount - previous <= threshold, where previous is what its (policy, cycle, sender, nonce)
      -- holds, and a fitting operation adds amount - previous to its usage row and replaces its reservation. Only the
      -- answer "every operation fits" is used, so it is computed set-based: assuming every earlier operation fitted,
      -- the usage before an operation is the stored usage plus the deltas of the earlier operations on the same row,
      -- and previous is the amount of the last earlier reservation of the same key, else the stored one. Up to the
      -- first operation that does not fit, that is what the sequential arithmetic sees, so all pass exactly when all
      -- fit sequentially. Then the usage deltas and the reservations are written and true returned; otherwise nothing
      -- is written (but the usage rows created at zero) and false returned. operations: per reservation, its
      -- operation's number, ascending; the reservations of one operation name distinct limits.
      CREATE FUNCTION reserve_limits_if_all_fit(
        policy_ids uuid[], cycle_starts bigint[], scope_keys text[], senders text[], nonces numeric[], amounts numeric[],
        thresholds numeric[], valid_untils bigint[], operations integer[]
      ) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      DECLARE
        wanted integer;
        locked integer;
        fits boolean;
        deltas numeric[];
        lowered boolean;
      BEGIN
        SELECT count(*), count(u.used) INTO wanted, locked
        FROM (SELECT DISTINCT * FROM unnest(policy_ids, cycle_starts, scope_keys) ORDER BY 1, 2, 3)
          AS k(policy_id, cycle_start_ms, scope_key)
        LEFT JOIN LATERAL (
          SELECT u.used FROM limit_usage u
          WHERE u.policy_id = k.policy_id AND u.cycle_start_ms = k.cycle_start_ms AND u.scope_key = k.scope_key
          FOR UPDATE) u ON true;
        IF locked < wanted THEN
          INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used)
          SELECT DISTINCT k.policy_id, k.cycle_start_ms, k.scope_key, 0::numeric
          FROM unnest(policy_ids, cycle_starts, scope_keys) AS k(policy_id, cycle_start_ms, scope_key)
          ORDER BY 1, 2, 3
          ON CONFLICT DO NOTHING;
          PERFORM 1
          FROM (SELECT DISTINCT * FROM unnest(policy_ids, cycle_starts, scope_keys) ORDER BY 1, 2, 3)
            AS k(policy_id, cycle_start_ms, scope_key)
          JOIN LATERAL (
            SELECT 1 FROM limit_usage u
            WHERE u.policy_id = k.policy_id AND u.cycle_start_ms = k.cycle_start_ms AND u.scope_key = k.scope_key
            FOR UPDATE) u ON true;
        END IF;
        -- A statement of its own, so its snapshot is taken after the locks: what it reads stays true until the end.
        SELECT COALESCE(bool_and(COALESCE(c.amount <= c.threshold AND c.used + c.used_before + c.delta <= c.threshold,
            false)), true),
          array_agg(c.delta ORDER BY c.i), bool_or(c.delta < 0)
        INTO fits, deltas, lowered
        FROM (
          SELECT d.*, COALESCE(sum(d.delta) OVER (PARTITION BY d.policy_id, d.cycle_start_ms, d.scope_key ORDER BY d.op
            RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS used_before
          FROM (
            SELECT p.*, p.amount - COALESCE(amounts[p.prior_i], p.held, 0) AS delta
            FROM (
              SELECT q.*, u.used, r.amount AS held, max(q.i) OVER (PARTITION BY q.policy_id, q.cycle_start_ms, q.sender,
                q.nonce ORDER BY q.op RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prior_i
              FROM unnest(policy_ids, cycle_starts, scope_keys, senders, nonces, amounts, thresholds, operations)
                WITH ORDINALITY AS q(policy_id, cycle_start_ms, scope_key, sender, nonce, amount, threshold, op, i)
              LEFT JOIN LATERAL (
                SELECT used FROM limit_usage u
                WHERE u.policy_id = q.policy_id AND u.cycle_start_ms = q.cycle_start_ms AND u.scope_key = q.scope_key
                OFFSET 0) u ON true
              LEFT JOIN LATERAL (
                SELECT amount FROM limit_reservations r
                WHERE r.policy_id = q.policy_id AND r.cycle_start_ms = q.cycle_start_ms AND r.sender = q.sender
                  AND r.nonce = q.nonce
                OFFSET 0) r ON true
            ) p
          ) d
        ) c;
        IF NOT fits THEN
          RETURN false;
        END IF;
        -- The rows exist and are locked. An insert's proposed row must pass the CHECK (used >= 0) even when it
        -- conflicts, so a usage that goes down (a repeated nonce at a lower amount) is an update of its own.
        INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used)
        SELECT k.policy_id, k.cycle_start_ms, k.scope_key, sum(k.delta)
        FROM unnest(policy_ids, cycle_starts, scope_keys, deltas) AS k(policy_id, cycle_start_ms, scope_key, delta)
        GROUP BY 1, 2, 3
        HAVING sum(k.delta) >= 0
        ORDER BY 1, 2, 3
        ON CONFLICT (policy_id, cycle_start_ms, scope_key) DO UPDATE SET used = limit_usage.used + EXCLUDED.used;
        IF lowered THEN
          UPDATE limit_usage u SET used = u.used + k.delta
          FROM (
            SELECT k.policy_id, k.cycle_start_ms, k.scope_key, sum(k.delta) AS delta
            FROM unnest(policy_ids, cycle_starts, scope_keys, deltas) AS k(policy_id, cycle_start_ms, scope_key, delta)
            GROUP BY 1, 2, 3
            HAVING sum(k.delta) < 0
          ) k
          WHERE u.policy_id = k.policy_id AND u.cycle_start_ms = k.cycle_start_ms AND u.scope_key = k.scope_key;
        END IF;
        INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
        SELECT DISTINCT ON (k.policy_id, k.cycle_start_ms, k.sender, k.nonce)
          k.policy_id, k.cycle_start_ms, k.sender, k.nonce, k.scope_key, k.amount, k.valid_until
        FROM unnest(policy_ids, cycle_starts, senders, nonces, scope_keys, amounts, valid_untils)
          WITH ORDINALITY AS k(policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until, i)
        ORDER BY k.policy_id, k.cycle_start_ms, k.sender, k.nonce, k.i DESC
        ON CONFLICT (policy_id, cycle_start_ms, sender, nonce)
        DO UPDATE SET amount = EXCLUDED.amount, valid_until = EXCLUDED.valid_until;
        RETURN true;
      END;
      $fn$;
    `,
  },
  {
    id: 31,
    sql: `
      -- reserve_limits_if_all_fit's statements read its arrays through unnest, whose row count a custom plan takes
      -- from the array given and a generic plan guesses as 10. With batches under five operations (ten reservations)
      -- a custom plan looks cheaper, so PostgreSQL built three of its statements' plans anew on every call (seen with
      -- auto_explain: rows=6 for a batch of three) although the plan is the same whatever the count: a primary-key
      -- look-up per key. Their generic plans are kept instead (measured: about a fifth of the function's backend CPU).
      ALTER FUNCTION reserve_limits_if_all_fit(uuid[], bigint[], text[], text[], numeric[], numeric[], numeric[],
        bigint[], integer[])
        SET plan_cache_mode = force_generic_plan;
    `,
  },
  {
    id: 32,
    sql: `
      -- Every sponsorship row and every limit usage or reservation row checked its foreign key when written: a
      -- FOR KEY SHARE look-up of its paymaster or policy, three per signed operation with two limits (measured: about
      -- 4 µs a row, some 12 µs a sponsorship). The service never deletes a paymaster or a policy (it switches them off),
      -- and every id it writes comes from a row it has just read, so the checks guarded nothing it does. What they
      -- gave an operator who deletes such a row by hand, the rows below it going too, triggers on the parents' deletes
      -- keep. Unlike a foreign key, a trigger does not stop a sponsorship written while its paymaster is being deleted;
      -- such a row is one nobody reads any more.
      ALTER TABLE sponsorships DROP CONSTRAINT sponsorships_paymaster_id_fkey;
      ALTER TABLE limit_usage DROP CONSTRAINT limit_usage_policy_id_fkey;
      ALTER TABLE limit_reservations DROP CONSTRAINT limit_reservations_policy_id_fkey;
      CREATE FUNCTION delete_paymaster_sponsorships() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM sponsorships WHERE paymaster_id = OLD.id;
        RETURN OLD;
      END $$;
      CREATE TRIGGER paymaster_sponsorships_deleted AFTER DELETE ON paymasters
        FOR EACH ROW EXECUTE FUNCTION delete_paymaster_sponsorships();
      CREATE FUNCTION delete_policy_limit_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM limit_usage WHERE policy_id = OLD.id;
        DELETE FROM limit_reservations WHERE policy_id = OLD.id;
        RETURN OLD;
      END $$;
      CREATE TRIGGER policy_limit_rows_deleted AFTER DELETE ON policies
        FOR EACH ROW EXECUTE FUNCTION delete_policy_limit_rows();
    `,
  },
  {
    id: 33,
    sql: `
      -- A PostgreSQL batch's limits now go into the records' statement as two plain upserts (reserveLimits.ts,
      -- LIMITS_IF_ALL_FIT), which write only the rows that fit; this ends the statement when some did not, so that
      -- nothing of it stays and the batch takes the transaction's way. Measured with callgrind on a backend, batches
      -- of five: reserve_limits_if_all_fit's four statements spent three quarters of their instructions starting
      -- their executors. That function stays for an instance of an earlier build that may still call it.
      CREATE FUNCTION limits_fit_or_fail(fits boolean) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        IF NOT fits THEN
          RAISE EXCEPTION 'a spending limit of the batch no longer fits' USING ERRCODE = 'PM001';
        END IF;
        RETURN true;
      END;
      $fn$;
    `,
  },
];

/**
 * The channel of migration 15's notifications. The database sends "schema:accountId"; `Database.listen` delivers the
 * account id alone, and only from its own schema.
 */
export const CREDENTIALS_CHANNEL = "paymaster_credentials";

/** The channel of migration 28's notifications: a transaction queued event deliveries ("schema:queued"). */
export const EVENTS_CHANNEL = "paymaster_events";

/** Any fixed number: it names the lock that keeps two starting instances from migrating at once. */
const MIGRATION_LOCK = 4337_0001;

/** `lastId`: stop after that migration (a test of what a later one does to existing rows); all of them by default. */
export async function migrate(db: Database, lastId = Number.POSITIVE_INFINITY): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (id integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const applied = new Set(
      (await tx.query<{ id: number }>("SELECT id FROM schema_migrations")).map((row) => Number(row.id)),
    );
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.id) || migration.id > lastId) continue;
      await tx.exec(migration.sql);
      await tx.query("INSERT INTO schema_migrations (id) VALUES ($1)", [migration.id]);
    }
  });
}

/** How many steps of this build's schema the database lacks (readiness: 0 once migrate has run here or elsewhere). */
export async function pendingMigrations(db: Queryable): Promise<number> {
  const rows = await db.query<{ id: number }>("SELECT id FROM schema_migrations");
  const applied = new Set(rows.map((row) => Number(row.id)));
  return MIGRATIONS.filter((migration) => !applied.has(migration.id)).length;
}
