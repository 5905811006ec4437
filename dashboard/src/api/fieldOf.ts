/**
 * Which of a form's fields an API message is about: the API names the field first ("threshold must be …",
 * "policyData.url must be …"); a few fixed messages name it otherwise (`aliases`). Undefined: about the form.
 */
export function fieldOf(message: string, fields: Record<string, readonly string[]>): string | undefined {
  let best: { field: string; length: number } | undefined;
  const lower = message.toLowerCase();
  for (const [field, aliases] of Object.entries(fields)) {
    for (const alias of [field, ...aliases]) {
      const a = alias.toLowerCase();
      const hit = lower.startsWith(`${a} `) || lower.startsWith(`${a}.`) || lower.includes(` ${a} `) || lower === a;
      if (hit && (!best || a.length > best.length)) best = { field, length: a.length };
    }
  }
  return best?.field;
}
