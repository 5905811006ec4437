import { useState } from "preact/hooks";
import { FormError, TextField, type useSubmit } from "./forms";

type Submit = ReturnType<typeof useSubmit>;

/**
 * The From and To of a list's filter, typed in the page's local time (each page turns them into what its API takes),
 * with the API's message about either beside it.
 */
export function TimeRangeFields(props: {
  idPrefix: string;
  from: string;
  to: string;
  onFrom: (value: string) => void;
  onTo: (value: string) => void;
  form: Submit;
}) {
  const { idPrefix, form } = props;
  return (
    <>
      <TextField
        id={`${idPrefix}-from`}
        label="From"
        type="datetime-local"
        value={props.from}
        onValue={props.onFrom}
        error={form.errorOf("from")}
      />
      <TextField
        id={`${idPrefix}-to`}
        label="To"
        type="datetime-local"
        value={props.to}
        onValue={props.onTo}
        error={form.errorOf("to")}
      />
    </>
  );
}

/** The end of a filter form: the message about the form as a whole, and the button. */
export function FilterButton({ form }: { form: Submit }) {
  return (
    <>
      <FormError message={form.formError} />
      <button type="submit" disabled={form.busy}>
        Filter
      </button>
    </>
  );
}

/** Why a page of a list could not be loaded, read out at once. */
export function LoadError({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

/**
 * Where a paged list is: the cursor of each page seen so far, the last being the current one's (undefined: the first
 * page). `restart` goes back to the first page, as a new filter does.
 */
export function usePageCursors() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return {
    cursor: cursors[cursors.length - 1],
    canGoBack: cursors.length > 1,
    back: () => setCursors(cursors.slice(0, -1)),
    forward: (next: string) => setCursors([...cursors, next]),
    restart: () => setCursors([undefined]),
  };
}

/** Previous, next and refresh for a paged list; next is offered while the page loaded names a next cursor. */
export function PageNav(props: {
  label: string;
  pages: ReturnType<typeof usePageCursors>;
  nextCursor: string | null | undefined;
  reload: () => void;
}) {
  const { pages, nextCursor } = props;
  return (
    <nav class="row" aria-label={props.label}>
      <button type="button" class="secondary" disabled={!pages.canGoBack} onClick={pages.back}>
        Previous page
      </button>
      <button
        type="button"
        class="secondary"
        disabled={!nextCursor}
        onClick={() => nextCursor && pages.forward(nextCursor)}
      >
        Next page
      </button>
      <button type="button" class="secondary" onClick={props.reload}>
        Refresh
      </button>
    </nav>
  );
}
