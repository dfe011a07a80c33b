// CDK context settings that hold an object: written as one in cdk.json, or as its JSON with `-c key='{…}'` (which
// arrives as a string). One reader, so every such setting refuses a typo the same way.

/** The setting as an object; a string is parsed as JSON. `example` shows a valid value in the error. */
export function contextObject(raw: unknown, key: string, example: string): Record<string, unknown> {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new Error(`Context ${key} must be a JSON object, got ${raw}`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`Context ${key} must be an object such as ${example}, got ${JSON.stringify(value)}`);
  }
  return value as Record<string, unknown>;
}
