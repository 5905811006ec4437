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
];

/** Any fixed number: it names the lock that keeps two starting instances from migrating at once. */
const MIGRATION_LOCK = 4337_0001;

export async function migrate(db: Database): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (id integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const applied = new Set(
      (await tx.query<{ id: number }>("SELECT id FROM schema_migrations")).map((row) => Number(row.id)),
    );
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.id)) continue;
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
