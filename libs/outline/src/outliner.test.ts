import { createOutliner, NO_OUTLINE, SUPPORTED_LANGUAGES, type Outliner } from './index';

const HEADER = (name: string) => `# ${name} [aider-repomap-lite, compact]`;
const lines = (name: string, ...rest: string[]) => [HEADER(name), ...rest].join('\n');

let outliner: Outliner;

beforeAll(async () => {
  outliner = await createOutliner();
});

describe('createOutliner', () => {
  it('loads the runtime and every supported grammar before resolving', () => {
    expect(outliner.loadedLanguages()).toEqual([...SUPPORTED_LANGUAGES]);
    expect(SUPPORTED_LANGUAGES).toEqual(
      expect.arrayContaining(['typescript', 'tsx', 'javascript', 'python', 'go', 'rust', 'java']),
    );
  });

  it('compiles a working tag query for every loaded grammar', () => {
    const probes: Record<string, [string, string]> = {
      typescript: ['a.ts', 'function f() {}'],
      tsx: ['a.tsx', 'function f() { return <b/>; }'],
      javascript: ['a.js', 'function f() {}'],
      python: ['a.py', 'def f():\n    pass\n'],
      go: ['a.go', 'package a\nfunc f() {}\n'],
      rust: ['a.rs', 'fn f() {}'],
      java: ['A.java', 'class A { void f() {} }'],
      csharp: ['A.cs', 'class A { void f() {} }'],
      cpp: ['a.cpp', 'void f() {}'],
      ruby: ['a.rb', 'def f\nend\n'],
      php: ['a.php', '<?php\nfunction f() {}\n'],
      bash: ['a.sh', 'f() { :; }\n'],
    };
    expect(Object.keys(probes).sort()).toEqual([...SUPPORTED_LANGUAGES].sort());
    for (const [file, src] of Object.values(probes)) {
      const out = outliner.outline(file, src);
      expect(out.split('\n')[0]).toBe(HEADER(file));
      expect(out.split('\n')).toHaveLength(2 + (file === 'A.java' || file === 'A.cs' ? 1 : 0));
    }
  });
});

describe('Outliner.outline — TypeScript', () => {
  it('outlines classes, members with markers, interfaces, enums, aliases, namespaces and functions', () => {
    const src = `import { x } from './x';

/** Doc. */
@Component({ selector: 'a' })
export abstract class Foo<T> extends Bar implements Baz {
  private count = 1;
  handler = (e: Event): void => {};
  constructor(private readonly a: string) { super(); }
  static async create(id: string): Promise<Foo<T>> { return null!; }
  protected abstract hook(): void;
  get size(): number { return 1; }
  #secret(): void {}
  private helper(
    a: number,
    b: string, // trailing note
  ): void {}
}

export interface Shape extends Base {
  area(): number;
  name: string;
}

export enum Color { Red, Green }
export type Alias<T> = T | null;
declare namespace NS { function inner(): void; }

export function top<T>(a: number,
   b = 2): string {
  function nested() {}
  class Local {}
  return '';
}
export const arrow = async (x: number): Promise<void> => {};
const notAFunction = 3;
export default function () {}
`;
    expect(outliner.outline('src/foo.ts', src)).toBe(
      lines(
        'foo.ts',
        'abstract class Foo<T> extends Bar implements Baz',
        '  + handler = (e: Event): void =>',
        '  + constructor(private readonly a: string)',
        '  + static async create(id: string): Promise<Foo<T>>',
        '  # abstract hook(): void',
        '  + get size(): number',
        '  - #secret(): void',
        '  - helper(a: number, b: string): void',
        'interface Shape extends Base',
        '  + area(): number',
        'enum Color',
        'type Alias<T> = T | null',
        'namespace NS',
        '  function inner(): void',
        'function top<T>(a: number, b = 2): string',
        'const arrow = async (x: number): Promise<void> =>',
        'export default function ()',
      ),
    );
  });

  it('outlines TSX components with the tsx grammar', () => {
    const src = `export function App({ title }: Props): JSX.Element {
  return <div className="x">{title}</div>;
}
export const Button = ({ label }: { label: string }) => <button>{label}</button>;
class Widget extends React.Component<P> { render() { return <span />; } }
`;
    expect(outliner.outline('App.tsx', src)).toBe(
      lines(
        'App.tsx',
        'function App({ title }: Props): JSX.Element',
        'const Button = ({ label }: { label: string }) =>',
        'class Widget extends React.Component<P>',
        '  + render()',
      ),
    );
  });

  it('keeps the definitions it can recover from a file with syntax errors', () => {
    const src = `export class A {
  m(): void {
    foo(;
  }
  n(x: number) { return x; }
}
export function z() {}
`;
    expect(outliner.outline('broken.ts', src)).toBe(
      lines('broken.ts', 'class A', '  + m(): void', '  + n(x: number)', 'function z()'),
    );
  });
});

describe('Outliner.outline — JavaScript', () => {
  it('outlines classes, private and static members, generators and function-valued bindings', () => {
    const src = `class A extends B {
  static #count = 0;
  handler = (e) => {};
  constructor(x) { super(); }
  async *items() {}
  static get size() { return 1; }
  #hidden() {}
}
export default class { m() {} }
const f = function named(a) {}, g = (b) => b;
var h = async function() {};
module.exports = { foo() {} };
`;
    expect(outliner.outline('lib/a.mjs', src)).toBe(
      lines(
        'a.mjs',
        'class A extends B',
        '  + handler = (e) =>',
        '  + constructor(x)',
        '  + async *items()',
        '  + static get size()',
        '  - #hidden()',
        'export default class',
        '  + m()',
        'const f = function named(a)',
        'const g = (b) =>',
        'var h = async function()',
      ),
    );
  });
});

describe('Outliner.outline — Python', () => {
  it('outlines classes, methods without def, nested classes and top-level functions', () => {
    const src = `"""Module doc."""
import os

@dataclass
class Foo(Base, metaclass=Meta):
    """Doc."""
    x: int = 1

    def __init__(self, a: int, *args, **kw) -> None:
        def inner():
            pass
        self.a = a

    @property
    async def size(self) -> int:
        return 1

    class Inner:
        def m(self): ...

def top(a, b=2,
        c: str = "x") -> str:
    return ""

async def run(): pass
`;
    expect(outliner.outline('pkg/foo.py', src)).toBe(
      lines(
        'foo.py',
        'class Foo(Base, metaclass=Meta)',
        '  + __init__(self, a: int, *args, **kw) -> None',
        '  + async size(self) -> int',
        '  + class Inner',
        '    + m(self)',
        'def top(a, b=2, c: str = "x") -> str',
        'async def run()',
      ),
    );
  });

  it('stops a damaged signature where the parse error starts', () => {
    const src = 'class A:\n    def m(self):\n        return foo(\n\n    def n(self, x):\n        return x\n';
    expect(outliner.outline('bad.py', src)).toBe(lines('bad.py', 'class A', '  + m(self)'));
  });
});

describe('Outliner.outline — Go', () => {
  it('outlines types by kind, interface methods by exportedness, functions and methods with receivers', () => {
    const src = `package main

// Server serves.
type Server struct {
	addr string
}

type Handler interface {
	Serve(ctx context.Context, req *Request) (*Response, error)
	close() error
	io.Closer
}

type (
	ID    int
	Alias = string
)

func New[T any](addr string,
	opts ...Option) *Server {
	return nil
}

func (s *Server) Start(ctx context.Context) error { return nil }
`;
    expect(outliner.outline('server.go', src)).toBe(
      lines(
        'server.go',
        'type Server struct',
        'type Handler interface',
        '  + Serve(ctx context.Context, req *Request) (*Response, error)',
        '  - close() error',
        'type ID int',
        'type Alias = string',
        'func New[T any](addr string, opts ...Option) *Server',
        'func (s *Server) Start(ctx context.Context) error',
      ),
    );
  });
});

describe('Outliner.outline — Rust', () => {
  it('outlines structs, enums, traits, impls with pub-derived markers, modules, aliases and macros', () => {
    const src = `//! crate doc
#[derive(Debug)]
pub struct Point<T> { x: T }
pub enum Kind { A, B(u32) }
pub trait Shape: Send {
    fn area(&self) -> f64;
    fn name(&self) -> String { String::new() }
}
impl<T: Clone> Point<T> {
    pub fn new(x: T) -> Self { Self { x } }
    fn helper(&self) where T: Copy {}
    pub(crate) async unsafe fn raw(&mut self) {}
}
impl Shape for Point<f64> { fn area(&self) -> f64 { 0.0 } }
pub mod inner { pub fn f() {} }
pub type Res<T> = Result<T, Error>;
fn main() { fn local() {} }
macro_rules! m { () => {} }
pub const X: u32 = 1;
`;
    expect(outliner.outline('src/lib.rs', src)).toBe(
      lines(
        'lib.rs',
        'struct Point<T>',
        'enum Kind',
        'trait Shape: Send',
        '  + area(&self) -> f64',
        '  + name(&self) -> String',
        'impl<T: Clone> Point<T>',
        '  + new(x: T) -> Self',
        '  - helper(&self) where T: Copy',
        '  + async unsafe raw(&mut self)',
        'impl Shape for Point<f64>',
        '  + area(&self) -> f64',
        'mod inner',
        '  fn f()',
        'type Res<T> = Result<T, Error>',
        'fn main()',
        'macro_rules! m',
      ),
    );
  });
});

describe('Outliner.outline — Java', () => {
  it('outlines classes, constructors, methods with modifiers and nested types, without annotations', () => {
    const src = `package a;

import java.util.List;

@Entity
public final class Foo<T> extends Bar implements Baz, Qux {
    private int x;
    public Foo(int x) { this.x = x; }
    @Override
    public static <U> List<U> of(@NonNull U... items) throws IOException { return null; }
    protected abstract void hook();
    private void helper() {}
    interface Inner { void m(int a); }
    enum E { A, B; int v() { return 1; } }
    record R(int a, String b) {}
}
`;
    expect(outliner.outline('Foo.java', src)).toBe(
      lines(
        'Foo.java',
        'final class Foo<T> extends Bar implements Baz, Qux',
        '  + Foo(int x)',
        '  + static <U> List<U> of(U... items) throws IOException',
        '  # abstract void hook()',
        '  - void helper()',
        '  + interface Inner',
        '    + void m(int a)',
        '  + enum E',
        '    + int v()',
        '  + record R(int a, String b)',
      ),
    );
  });
});

describe('Outliner.outline — other shipped grammars', () => {
  it('outlines C# namespaces, types and members with access markers', () => {
    const src = `namespace App.Core {
[Serializable]
public sealed class Foo<T> : Bar, IBaz where T : class {
    private int x;
    public Foo(int x) { }
    public static async Task<int> RunAsync(string s, int n = 2) { return 1; }
    protected abstract void Hook();
    internal int Size() => 1;
    public enum E { A, B }
}
}
`;
    expect(outliner.outline('Foo.cs', src)).toBe(
      lines(
        'Foo.cs',
        'namespace App.Core',
        '  sealed class Foo<T> : Bar, IBaz where T : class',
        '    + Foo(int x)',
        '    + static async Task<int> RunAsync(string s, int n = 2)',
        '    # abstract void Hook()',
        '    ~ int Size()',
        '    + enum E',
      ),
    );
  });

  it('outlines C++ namespaces, classes with access sections, structs and free functions', () => {
    const src = `#include <string>
namespace app {
template <typename T>
class Foo : public Bar {
 public:
  Foo(int x) : x_(x) {}
  virtual ~Foo();
  int size() const { return 1; }
 private:
  void helper();
};
struct P { int x; void m(); };
enum class Color { Red };
}
static int top(int a, char **argv) { return 0; }
void *alloc(size_t n);
`;
    expect(outliner.outline('foo.hpp', src)).toBe(
      lines(
        'foo.hpp',
        'namespace app',
        '  class Foo : public Bar',
        '    + Foo(int x)',
        '    + virtual ~Foo()',
        '    + int size() const',
        '    - void helper()',
        '  struct P',
        '    + void m()',
        '  enum class Color',
        'static int top(int a, char **argv)',
        'void *alloc(size_t n)',
      ),
    );
  });

  it('outlines Ruby modules, classes, private sections and endless methods', () => {
    const src = `module Outer
  class Foo < Bar
    include Mod
    def initialize(a, b = 2, *rest, key:, &blk)
      @a = a
    end
    def self.build(x) = new(x)
    private
    def helper
    end
  end
end
def top(x)
end
`;
    expect(outliner.outline('foo.rb', src)).toBe(
      lines(
        'foo.rb',
        'module Outer',
        '  class Foo < Bar',
        '    + initialize(a, b = 2, *rest, key:, &blk)',
        '    + self.build(x)',
        '    - helper',
        'def top(x)',
      ),
    );
  });

  it('outlines PHP classes, interfaces, traits, enums and functions', () => {
    const src = `<?php
namespace App\\Models;
#[Attr]
final class User extends Model implements HasName {
    private int $id;
    public function __construct(private string $name) {}
    public static function find(int $id): ?self { return null; }
    protected function hook(): void {}
}
interface HasName { public function name(): string; }
function helper(array $a = []): int { return 1; }
`;
    expect(outliner.outline('User.php', src)).toBe(
      lines(
        'User.php',
        'namespace App\\Models',
        'final class User extends Model implements HasName',
        '  + __construct(private string $name)',
        '  + static find(int $id): ?self',
        '  # hook(): void',
        'interface HasName',
        '  + name(): string',
        'function helper(array $a = []): int',
      ),
    );
  });

  it('outlines Bash functions in both syntaxes, without nested ones', () => {
    const src = 'foo() { echo; }\nfunction bar { :; }\nfunction baz() {\n  inner() { :; }\n}\n';
    expect(outliner.outline('run.sh', src)).toBe(lines('run.sh', 'foo()', 'function bar', 'function baz()'));
  });
});

describe('Outliner.outline — what has no outline', () => {
  it.each(['README.md', 'notes.txt', 'package.json', 'ci.yaml', 'ci.yml', 'Cargo.toml', 'data.csv', 'index.html', 'site.css', 'Makefile', '.bashrc', ''])(
    'returns "" for %j',
    (name) => {
      expect(outliner.outline(name, 'def f():\n    pass\nfunction g() {}\n')).toBe('');
    },
  );

  it('returns "" for a code file without definitions', () => {
    expect(outliner.outline('script.py', 'import os\nprint(os.getcwd())\n')).toBe('');
    expect(outliner.outline('empty.ts', '')).toBe('');
  });

  it('returns "" instead of throwing on non-string input', () => {
    const call = outliner.outline as unknown as (a: unknown, b: unknown) => string;
    expect(call('a.ts', undefined)).toBe('');
    expect(call(null, 'function f() {}')).toBe('');
  });

  it('is usable as the kernel-injected (filename, source) => string function', () => {
    const inject = (fn: (filename: string, source: string) => string) => fn('viking://resources/app/util.go', 'package u\nfunc F() {}\n');
    expect(inject(outliner.outline)).toBe(lines('util.go', 'func F()'));
    expect(inject(NO_OUTLINE)).toBe('');
  });
});

describe('Outliner.outline — bounds and cache', () => {
  it('outlines only the first maxSourceChars characters of a huge file', async () => {
    const head = 'def a():\n    pass\n\ndef b():\n    pass\n\n';
    const small = await createOutliner({ maxSourceChars: head.length });
    const src = head + 'def later():\n    pass\n'.repeat(1000);
    expect(small.outline('big.py', src)).toBe(lines('big.py', 'def a()', 'def b()'));
  });

  it('caps the number of definition lines and says how many were left out', async () => {
    const capped = await createOutliner({ maxDefinitions: 3 });
    const src = Array.from({ length: 10 }, (_, i) => `function f${i}() {}`).join('\n');
    expect(capped.outline('many.js', src)).toBe(
      lines('many.js', 'function f0()', 'function f1()', 'function f2()', '# … 7 more definitions'),
    );
  });

  it('cuts over-long definition lines with an ellipsis', async () => {
    const narrow = await createOutliner({ maxLineChars: 20 });
    expect(narrow.outline('long.ts', 'function abcdefghij(alpha: number, beta: number) {}')).toBe(
      lines('long.ts', 'function abcdefghij…'),
    );
  });

  it('reflects a changed source under the same file name (cache keyed by content)', () => {
    expect(outliner.outline('c.py', 'def one():\n    pass\n')).toBe(lines('c.py', 'def one()'));
    expect(outliner.outline('c.py', 'def two():\n    pass\n')).toBe(lines('c.py', 'def two()'));
    expect(outliner.outline('c.py', 'def one():\n    pass\n')).toBe(lines('c.py', 'def one()'));
  });
});
