import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { ApiFailure } from "../api/client";
import { fieldOf } from "../api/fieldOf";

/** Which field an error is about (a name of the form's `fields`), or none: the form as a whole. */
export interface FormErrors {
  field?: string;
  message: string;
}

/**
 * A form's submission: runs `action`, and on a refusal keeps the API's message beside the field it names (or above
 * the button when it names none). `fields` lists the form's fields and the other words the API uses for them.
 */
export function useSubmit(fields: Record<string, readonly string[]>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<FormErrors | undefined>();
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      const message = caught instanceof ApiFailure || caught instanceof Error ? caught.message : String(caught);
      setError({ field: fieldOf(message, fields), message });
    } finally {
      setBusy(false);
    }
  };
  const errorOf = (field: string) => (error?.field === field ? error.message : undefined);
  const formError = error && error.field === undefined ? error.message : undefined;
  return { busy, run, errorOf, formError, clear: () => setError(undefined) };
}

interface FieldProps {
  id: string;
  label: string;
  error?: string;
  hint?: string;
  children: (described: { id: string; "aria-invalid"?: boolean; "aria-describedby"?: string }) => ComponentChildren;
}

/** A labelled control with its hint and the API's message about it, both read out with the control. */
export function Field({ id, label, error, hint, children }: FieldProps) {
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div class={error ? "field invalid" : "field"}>
      <label for={id}>{label}</label>
      {children({
        id,
        ...(error ? { "aria-invalid": true } : {}),
        ...(described ? { "aria-describedby": described } : {}),
      })}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

interface InputProps {
  type?: "text" | "password" | "url" | "datetime-local";
  placeholder?: string;
  inputMode?: "text" | "decimal" | "numeric";
  autoComplete?: string;
  spellcheck?: boolean;
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  hint?: string;
}

export function TextField({ id, label, value, onValue, error, hint, type, ...rest }: InputProps) {
  return (
    <Field id={id} label={label} error={error} hint={hint}>
      {(described) => (
        <input
          {...rest}
          {...described}
          // One input whatever its type: Preact's types tell input kinds apart, which this wrapper does not need.
          type={(type ?? "text") as "text"}
          name={id}
          value={value}
          onInput={(event) => onValue((event.currentTarget as HTMLInputElement).value)}
        />
      )}
    </Field>
  );
}

interface SelectProps {
  id: string;
  label: string;
  value: string;
  onValue: (value: string) => void;
  options: readonly { value: string; label: string }[];
  error?: string;
  hint?: string;
}

export function SelectField({ id, label, value, onValue, options, error, hint }: SelectProps) {
  return (
    <Field id={id} label={label} error={error} hint={hint}>
      {(described) => (
        <select
          {...described}
          name={id}
          value={value}
          onChange={(event) => onValue((event.currentTarget as HTMLSelectElement).value)}
        >
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** A message about the whole form (one that names none of its fields). */
export function FormError({ message }: { message?: string }) {
  return message ? (
    <p class="error form-error" role="alert">
      {message}
    </p>
  ) : null;
}

/** Copies `text`, and says so where a screen reader hears it. */
function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
    setTimeout(() => setState("idle"), 2000);
  };
  return (
    <span class="copy">
      <button type="button" class="secondary" onClick={copy}>
        {label}
      </button>
      <span aria-live="polite" class="copy-state">
        {state === "copied" ? "Copied" : state === "failed" ? "Copy failed: select the text instead" : ""}
      </span>
    </span>
  );
}

/** A block of text with a copy button: an apiKey, a URL, a code snippet. */
export function Copyable({ label, text, code = false }: { label: string; text: string; code?: boolean }) {
  return (
    <div class="copyable">
      <div class="copyable-head">
        <span class="copyable-label">{label}</span>
        <CopyButton text={text} label={`Copy ${label}`} />
      </div>
      {code ? (
        <pre>
          <code>{text}</code>
        </pre>
      ) : (
        <code class="value">{text}</code>
      )}
    </div>
  );
}
