/**
 * A small validator kit that reproduces how the reference server's pydantic-v2 models (under
 * FastAPI, Python-mode lax validation) accept or reject JSON bodies, with pydantic's error
 * locations, messages and types. Only the shapes the search routes declare are covered.
 */
import type { ValidationIssue } from './errors';

/** Location path. */
export type Loc = ReadonlyArray<string | number>;

/** Outcome of one validation. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** A field type. `label` is pydantic's name for it inside union error locations. */
export interface Validator<T> {
  readonly label: string;
  /** Validate `input` at `loc`; `strict` is the first pass of pydantic's smart unions. */
  check(input: unknown, loc: Loc, strict: boolean): Outcome<T>;
}

const ok = <T>(value: T): Outcome<T> => ({ ok: true, value });
const fail = (loc: Loc, msg: string, type: string): Outcome<never> => ({ ok: false, issues: [{ loc: [...loc], msg, type }] });

/** True for a JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `str`. pydantic v2 never turns numbers into strings, even in lax mode. */
export const str: Validator<string> = {
  label: 'str',
  check: (v, loc) => (typeof v === 'string' ? ok(v) : fail(loc, 'Input should be a valid string', 'string_type')),
};

// Integer strings as pydantic-core reads them: surrounding whitespace, `_` separators and
// trailing decimal zeros ("5.00") are accepted.
const INT_TEXT = /^[+-]?\d+(?:_\d+)*(?:\.0*)?$/;

const unsafe = (loc: Loc): Outcome<never> =>
  fail(loc, `Input should be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`, 'int_range');

/**
 * `int`. Lax: booleans, floats with no fractional part and integer strings convert. Beyond
 * pydantic, an integer outside ±(2^53 − 1) (`1e308`, `9007199254740993`) is refused: no
 * field of the mesh can carry it, and it cannot even be read exactly.
 */
export const int: Validator<number> = {
  label: 'int',
  check(v, loc, strict) {
    if (typeof v === 'number') {
      if (Number.isInteger(v)) return Number.isSafeInteger(v) ? ok(v) : unsafe(loc);
      if (strict) return fail(loc, 'Input should be a valid integer', 'int_type');
      if (!Number.isFinite(v)) return fail(loc, 'Input should be a finite number', 'finite_number');
      return fail(loc, 'Input should be a valid integer, got a number with a fractional part', 'int_from_float');
    }
    if (strict) return fail(loc, 'Input should be a valid integer', 'int_type');
    if (typeof v === 'boolean') return ok(v ? 1 : 0);
    if (typeof v === 'string') {
      const s = v.trim();
      if (!INT_TEXT.test(s)) return fail(loc, 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing');
      const n = Number.parseInt(s.replace(/_/g, ''), 10);
      return Number.isSafeInteger(n) ? ok(n) : unsafe(loc);
    }
    return fail(loc, 'Input should be a valid integer', 'int_type');
  },
};

const FLOAT_TEXT = /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?$|^[+-]?(?:inf|infinity|nan)$/i;

/** `float`. Strict accepts ints; lax also booleans and numeric strings. */
export const float: Validator<number> = {
  label: 'float',
  check(v, loc, strict) {
    if (typeof v === 'number') return ok(v);
    if (strict) return fail(loc, 'Input should be a valid number', 'float_type');
    if (typeof v === 'boolean') return ok(v ? 1 : 0);
    if (typeof v === 'string') {
      const s = v.trim();
      if (!FLOAT_TEXT.test(s)) return fail(loc, 'Input should be a valid number, unable to parse string as a number', 'float_parsing');
      const t = s.toLowerCase().replace(/_/g, '');
      if (t.endsWith('nan')) return ok(NaN);
      if (t.endsWith('inf') || t.endsWith('infinity')) return ok(t.startsWith('-') ? -Infinity : Infinity);
      return ok(Number.parseFloat(t));
    }
    return fail(loc, 'Input should be a valid number', 'float_type');
  },
};

const TRUE_TEXT = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_TEXT = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** `bool`. Lax: 0/1 and the usual yes/no strings (case-insensitive). */
export const bool: Validator<boolean> = {
  label: 'bool',
  check(v, loc, strict) {
    if (typeof v === 'boolean') return ok(v);
    if (strict) return fail(loc, 'Input should be a valid boolean', 'bool_type');
    if (typeof v === 'number') {
      if (v === 0 || v === 1) return ok(v === 1);
      return fail(loc, 'Input should be a valid boolean, unable to interpret input', 'bool_parsing');
    }
    if (typeof v === 'string') {
      const s = v.toLowerCase();
      if (TRUE_TEXT.has(s)) return ok(true);
      if (FALSE_TEXT.has(s)) return ok(false);
      return fail(loc, 'Input should be a valid boolean, unable to interpret input', 'bool_parsing');
    }
    return fail(loc, 'Input should be a valid boolean', 'bool_type');
  },
};

/** Accepts anything (`Any`). */
export const any: Validator<unknown> = { label: 'any', check: (v) => ok(v) };

/** pydantic's rendering of the expected literals: `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`. */
function expectedRepr(values: readonly string[]): string {
  const q = values.map((v) => `'${v}'`);
  return q.length <= 1 ? q.join('') : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

/** `Literal[...]` over strings. */
export function literal<const T extends string>(...values: T[]): Validator<T> {
  const label = `literal[${values.map((v) => `'${v}'`).join(',')}]`;
  const msg = `Input should be ${expectedRepr(values)}`;
  return {
    label,
    check: (v, loc) => ((values as readonly unknown[]).includes(v) ? ok(v as T) : fail(loc, msg, 'literal_error')),
  };
}

/** `list[item]` with an optional `max_length`. */
export function list<T>(item: Validator<T>, opts: { maxLength?: number } = {}): Validator<T[]> {
  return {
    label: `list[${item.label}]`,
    check(v, loc, strict) {
      if (!Array.isArray(v)) return fail(loc, 'Input should be a valid list', 'list_type');
      if (opts.maxLength !== undefined && v.length > opts.maxLength) {
        const s = opts.maxLength === 1 ? '' : 's';
        return fail(loc, `List should have at most ${opts.maxLength} item${s} after validation, not ${v.length}`, 'too_long');
      }
      const out: T[] = [];
      const issues: ValidationIssue[] = [];
      v.forEach((x, i) => {
        const r = item.check(x, [...loc, i], strict);
        if (r.ok) out.push(r.value);
        else issues.push(...r.issues);
      });
      return issues.length ? { ok: false, issues } : ok(out);
    },
  };
}

/** `dict[str, value]`; key order is preserved. */
export function dict<T>(value: Validator<T>): Validator<Record<string, T>> {
  return {
    label: `dict[str,${value.label}]`,
    check(v, loc, strict) {
      if (!isPlainObject(v)) return fail(loc, 'Input should be a valid dictionary', 'dict_type');
      const out: Record<string, T> = {};
      const issues: ValidationIssue[] = [];
      for (const [k, x] of Object.entries(v)) {
        const r = value.check(x, [...loc, k], strict);
        if (r.ok) Object.defineProperty(out, k, { value: r.value, enumerable: true, writable: true, configurable: true });
        else issues.push(...r.issues);
      }
      return issues.length ? { ok: false, issues } : ok(out);
    },
  };
}

/** `Optional[inner]`: null passes; no extra location segment. */
export function nullable<T>(inner: Validator<T>): Validator<T | null> {
  return {
    label: `nullable[${inner.label}]`,
    check: (v, loc, strict) => (v === null ? ok(null) : inner.check(v, loc, strict)),
  };
}

/**
 * `Union[...]` in pydantic's smart mode: the first member that validates strictly wins, then
 * the first that validates in lax mode; otherwise every member's errors, each located under
 * the member's label.
 */
export function union<T extends unknown[]>(...members: { [K in keyof T]: Validator<T[K]> }): Validator<T[number]> {
  const ms = members as ReadonlyArray<Validator<T[number]>>;
  return {
    label: ms.map((m) => m.label).join('|'),
    check(v, loc, strict) {
      for (const m of ms) {
        const r = m.check(v, [...loc, m.label], true);
        if (r.ok) return r;
      }
      if (strict) return fail(loc, 'Input should be a valid value', 'union_tag_invalid');
      const issues: ValidationIssue[] = [];
      for (const m of ms) {
        const r = m.check(v, [...loc, m.label], false);
        if (r.ok) return r;
        issues.push(...r.issues);
      }
      return { ok: false, issues };
    },
  };
}

/** `int` with `ge`/`le` bounds (`Field(ge=…, le=…)`). */
export function intRange(bounds: { ge?: number; le?: number }): Validator<number> {
  return {
    label: 'int',
    check(v, loc, strict) {
      const r = int.check(v, loc, strict);
      if (!r.ok) return r;
      if (bounds.ge !== undefined && r.value < bounds.ge) return fail(loc, `Input should be greater than or equal to ${bounds.ge}`, 'greater_than_equal');
      if (bounds.le !== undefined && r.value > bounds.le) return fail(loc, `Input should be less than or equal to ${bounds.le}`, 'less_than_equal');
      return r;
    },
  };
}

/** Smallest and largest value of a proto `int32` field. */
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

/** An `int` that fits the proto `int32` field it is sent in (a larger one failed serialisation: a 500). */
export const int32: Validator<number> = intRange({ ge: INT32_MIN, le: INT32_MAX });

/**
 * One declared model field. Declare a model's fields with {@link fields} (or inline in the
 * call), so each name and `required: true` keep their literal types: {@link validateModel}
 * then types the values it returns ({@link ModelValues}) and no caller casts them.
 * @typeParam N the field's name
 * @typeParam T the value its validator produces
 */
export interface FieldSpec<N extends string = string, T = unknown> {
  readonly name: N;
  readonly type: Validator<T>;
  /** Required fields report `missing` when absent. @default false */
  readonly required?: boolean;
}

/** The value type a field's validator produces. */
type ValueOf<S> = S extends { readonly type: Validator<infer T> } ? T : never;

/**
 * The validated values of a model over `F`: a required field's value is always there, an
 * optional one only when the body had it (absent fields are left to the caller's defaults).
 */
export type ModelValues<F extends readonly FieldSpec[]> = {
  [S in F[number] as S extends { readonly required: true } ? S['name'] : never]: ValueOf<S>;
} & {
  [S in F[number] as S extends { readonly required: true } ? never : S['name']]?: ValueOf<S>;
};

/**
 * Declare a model's fields in declaration order (the order pydantic reports their errors in),
 * keeping the literal names and `required` flags {@link ModelValues} reads.
 */
export function fields<const F extends readonly FieldSpec[]>(...specs: F): F {
  return specs;
}

/** A validated model: values of the fields that were present, and which keys were present. */
export interface ModelOutcome<V = Record<string, unknown>> {
  /** Validated values of present fields only (absent fields are left to the caller's defaults). */
  values: V;
  /** Keys present in the body (pydantic's `model_fields_set`). */
  provided: ReadonlySet<string>;
}

/**
 * Validate a body against `fields` with `extra="forbid"`: field errors in declaration order,
 * then one `extra_forbidden` per unknown key in body order. A non-object body fails with
 * `model_attributes_type` at `["body"]`; an absent body (undefined) with `missing`.
 */
export function validateModel<const F extends readonly FieldSpec[]>(
  body: unknown,
  fields: F,
  loc: Loc = ['body'],
): { ok: true; model: ModelOutcome<ModelValues<F>> } | { ok: false; issues: ValidationIssue[] } {
  if (body === undefined) return { ok: false, issues: [{ loc: [...loc], msg: 'Field required', type: 'missing' }] };
  if (!isPlainObject(body)) {
    return { ok: false, issues: [{ loc: [...loc], msg: 'Input should be a valid dictionary or object to extract fields from', type: 'model_attributes_type' }] };
  }
  const issues: ValidationIssue[] = [];
  const values: Record<string, unknown> = {};
  const provided = new Set<string>();
  const known = new Set(fields.map((f) => f.name));
  for (const f of fields) {
    if (!Object.hasOwn(body, f.name)) {
      if (f.required) issues.push({ loc: [...loc, f.name], msg: 'Field required', type: 'missing' });
      continue;
    }
    provided.add(f.name);
    const r = f.type.check(body[f.name], [...loc, f.name], false);
    if (r.ok) values[f.name] = r.value;
    else issues.push(...r.issues);
  }
  for (const key of Object.keys(body)) {
    if (!known.has(key)) issues.push({ loc: [...loc, key], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' });
  }
  if (issues.length) return { ok: false, issues };
  // Every required field is present and every present value passed its field's validator:
  // the record is the typed model (the one place that claims it, for every caller).
  return { ok: true, model: { values: values as ModelValues<F>, provided } };
}

/**
 * A model nested in a body: an object validated against `fields` at its location (unknown
 * keys forbidden), producing the typed values.
 * @param label the name pydantic gives it inside union error locations @default "model"
 */
export function model<const F extends readonly FieldSpec[]>(fields: F, label = 'model'): Validator<ModelValues<F>> {
  return {
    label,
    check(v, loc) {
      const r = validateModel(v, fields, loc);
      return r.ok ? { ok: true, value: r.model.values } : r;
    },
  };
}
