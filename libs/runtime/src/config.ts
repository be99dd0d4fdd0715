/**
 * Configuration from the environment, validated at start-up with every problem listed at
 * once (STYLE B7: `mustMapEnv`, but all at once). Each service's `config.ts` declares a zod
 * schema over env var names and calls `loadConfig`.
 */
import { z } from 'zod';

/** Thrown by `loadConfig`; `problems` has one line per invalid or missing variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Environment as read by `loadConfig`. */
export type Env = Record<string, string | undefined>;

/**
 * Parse `env` with `schema` (keys are env var names). Empty strings count as unset.
 * @returns the frozen typed config
 * @throws ConfigError listing every problem
 */
export function loadConfig<S extends z.ZodRawShape>(schema: S, env: Env): Readonly<z.infer<z.ZodObject<S>>> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema)) {
    const v = env[key];
    input[key] = v === undefined || v.trim() === '' ? undefined : v.trim();
  }
  const res = z.object(schema).safeParse(input);
  if (!res.success) {
    const problems = res.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      const raw = input[key];
      return `${key}: ${i.message}${raw === undefined ? '' : ` (got ${JSON.stringify(raw)})`}`;
    });
    throw new ConfigError(problems);
  }
  return Object.freeze(res.data) as Readonly<z.infer<z.ZodObject<S>>>;
}

/** Env helpers producing zod schemas with clear messages. */
export const env = {
  /** A string with a default. */
  str: (def?: string) => (def === undefined ? z.string() : z.string().default(def)),
  /** An optional string. */
  optStr: () => z.string().optional(),
  /** An integer in [min, max] with a default. */
  int: (def: number | undefined, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) => {
    const base = z
      .string()
      .regex(/^-?\d+$/, { message: 'must be an integer' })
      .transform(Number)
      .pipe(z.number().min(min, { message: `must be ≥ ${min}` }).max(max, { message: `must be ≤ ${max}` }));
    return def === undefined ? base : base.default(def);
  },
  /** A port number (0 = any free port). */
  port: (def: number) => env.int(def, 0, 65535),
  /** A boolean: true/false/1/0/yes/no/on/off. */
  bool: (def: boolean) =>
    z
      .string()
      .transform((s, ctx) => {
        const v = s.toLowerCase();
        if (['true', '1', 'yes', 'on'].includes(v)) return true;
        if (['false', '0', 'no', 'off'].includes(v)) return false;
        ctx.addIssue({ code: 'custom', message: 'must be a boolean (true/false)' });
        return z.NEVER;
      })
      .default(def),
  /** One of fixed values. */
  oneOf: <T extends string>(values: readonly [T, ...T[]], def?: T) => {
    const base = z.enum(values, { message: `must be one of ${values.join(', ')}` });
    return def === undefined ? base : base.default(def);
  },
  /** An optional URL with one of the given protocols. */
  optUrl: (protocols: string[]) =>
    z
      .string()
      .refine(
        (s) => {
          try {
            return protocols.includes(new URL(s).protocol.replace(/:$/, ''));
          } catch {
            return false;
          }
        },
        { message: `must be a URL (${protocols.join('|')}://…)` },
      )
      .optional(),
  /** `host:port` address of a downstream service. */
  addr: (def?: string) => {
    const base = z.string().regex(/^[^\s:]+:\d{1,5}$/, { message: 'must be host:port' });
    return def === undefined ? base : base.default(def);
  },
};
