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
