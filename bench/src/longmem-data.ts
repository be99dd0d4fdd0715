/**
 * The `longmem` section's data: long multi-session conversations, English and Chinese, with
 * facts planted among chit-chat and questions about them asked back in other words.
 *
 * Each user has {@link LONGMEM_SESSIONS} dated sessions of 36–44 turns (a turn = the user's
 * line and the assistant's reply). Filler turns talk about work, food, travel, family, health
 * and hobbies with the facts' own vocabulary (dentists, sisters, trips, prices, allergies…)
 * and distractor values of the facts' kinds (other cities, days, names, prices), so a
 * question's topic words alone do not find its turn. Into that go one fact of every
 * {@link FACT_KINDS kind}, each with a question that paraphrases it:
 *
 * - `single`: one turn holds the answer;
 * - `two-turn`: the answer is split over two adjacent turns ("I booked a trip for May." /
 *   "It's Kyoto…"), gold = both;
 * - `corrected`: an early session states a value and a later one corrects it ("the dentist
 *   moved me to Thursday"), gold = the correction, the first turn is recorded as `stale`.
 *
 * Everything derives from (seed, language, user index) through {@link Rng}: the same seed gives
 * the same bytes. A question's answer spans and stale spans occur in its gold (stale) turns and
 * in no other turn of its user — {@link generateLongmem} checks that and re-rolls a user whose
 * draw broke it — and never in the question.
 */
import { hashSeed, Rng } from './rng';

/** A language of the conversations. */
export type LongmemLang = 'en' | 'zh';
/** The languages, in run order. */
export const LONGMEM_LANGS: readonly LongmemLang[] = ['en', 'zh'];
/** How a question's answer is planted. */
export type QuestionKind = 'single' | 'two-turn' | 'corrected';
/** Which questions a row scores: all, or the held-out third ({@link isHeldOutQuestion}). */
export type LongmemSplit = 'train' | 'heldout';

/** The generator's default seed. */
export const LONGMEM_SEED = 0x6c6d656d;
/** Users per language. @default 4 */
export const LONGMEM_USERS = 4;
/** Sessions per user. @default 8 */
export const LONGMEM_SESSIONS = 8;
/** Turns per session, inclusive range. */
export const LONGMEM_TURNS: readonly [number, number] = [36, 44];

/** One turn: the user's line and the assistant's reply. */
export interface LongmemTurn {
  /** `t<NNN>`, numbered from 1 through all of the user's sessions. */
  id: string;
  /** Position in the user's conversation, from 0. */
  index: number;
  /** The session's date, `YYYY-MM-DD`. */
  session: string;
  userLine: string;
  assistantLine: string;
}

/** One dated session. */
export interface LongmemSession {
  /** `YYYY-MM-DD`; sessions are in date order. */
  date: string;
  turns: LongmemTurn[];
}

/** One user's conversation. */
export interface LongmemUser {
  /** The user id the memories are written under, e.g. `longmem-en-u1`. */
  id: string;
  sessions: LongmemSession[];
}

/** One question asked back after the conversation. */
export interface LongmemQuestion {
  /** `<user>-<fact kind>`, e.g. `longmem-en-u1-dentist`. */
  id: string;
  user: string;
  lang: LongmemLang;
  kind: QuestionKind;
  /** The fact kind's slug. */
  fact: string;
  /** The question, worded differently from the fact. */
  query: string;
  /** Turn ids holding the answer (two adjacent ones for `two-turn`; the correction for `corrected`). */
  gold: string[];
  /** Short strings that a context holding the answer contains. */
  spans: string[];
  /** Turn ids with a value that a later turn corrected (`corrected` only). */
  stale: string[];
  /** The corrected, no longer true value(s). */
  staleSpans: string[];
  split: LongmemSplit;
}

/** A language's conversations and questions. */
export interface LongmemSet {
  lang: LongmemLang;
  seed: number;
  users: LongmemUser[];
  questions: LongmemQuestion[];
}

/** Options of {@link generateLongmem}. */
export interface LongmemOptions {
  /** @default LONGMEM_SEED */
  seed?: number;
  /** Users. @default LONGMEM_USERS */
  users?: number;
  /** Sessions per user (at least 3: a correction needs a later session). @default LONGMEM_SESSIONS */
  sessions?: number;
  /** Questions per user, the first n fact kinds of the user's shuffled list. @default every kind (25) */
  questions?: number;
}

/** Whether a question is in the held-out third: `hashSeed(id) % 3 === 0`. */
export function isHeldOutQuestion(id: string): boolean {
  return hashSeed(id) % 3 === 0;
}

/** The user id of the k-th user (from 1) of a language. */
export function longmemUser(lang: LongmemLang, k: number): string {
  return `longmem-${lang}-u${k}`;
}

const TAGS: Record<LongmemLang, { user: string; assistant: string }> = {
  en: { user: 'User: ', assistant: 'Assistant: ' },
  zh: { user: '用户：', assistant: '助手：' },
};

/** The lines of a turn as stored: the speaker-tagged user line, then the assistant's reply. */
export function turnLines(lang: LongmemLang, t: LongmemTurn): [string, string] {
  return [`${TAGS[lang].user}${t.userLine}`, `${TAGS[lang].assistant}${t.assistantLine}`];
}

/** A turn's text as stored in the `turns` shape (its two lines). */
export function turnText(lang: LongmemLang, t: LongmemTurn): string {
  return turnLines(lang, t).join('\n');
}

/** A whole session as one markdown memory (the `sessions` shape): a `## <date>` header, then every turn, a blank line between turns. */
export function sessionText(lang: LongmemLang, s: LongmemSession): string {
  return `## ${s.date}\n\n${s.turns.map((t) => turnText(lang, t)).join('\n\n')}\n`;
}

/** Lowercase, whitespace runs to one space, trimmed: the form spans are matched in. */
export function normalizeText(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

const ALNUM = /[a-z0-9]/;

/**
 * Whether `span` occurs in `text`, both {@link normalizeText normalised}. A span that starts
 * (ends) with an ASCII letter or digit must not be preceded (followed) by one, so `Porto` is
 * not found in `Portobello` and `$349` not in `$3490`; Chinese characters match as substrings.
 * `textIsNormal`: `text` is already normalised (a hot loop over long texts).
 */
export function containsSpan(text: string, span: string, textIsNormal = false): boolean {
  const h = textIsNormal ? text : normalizeText(text);
  const s = normalizeText(span);
  if (s === '') return false;
  const checkStart = ALNUM.test(s[0]!);
  const checkEnd = ALNUM.test(s[s.length - 1]!);
  for (let i = h.indexOf(s); i >= 0; i = h.indexOf(s, i + 1)) {
    if (checkStart && i > 0 && ALNUM.test(h[i - 1]!)) continue;
    const j = i + s.length;
    if (checkEnd && j < h.length && ALNUM.test(h[j]!)) continue;
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Value pools. A user's fact values are drawn without replacement from one bag per pool, and the
// filler's distractors from what is left, so a value names one fact of its user only.

type PoolName =
  | 'female'
  | 'male'
  | 'pet'
  | 'city'
  | 'company'
  | 'job'
  | 'day'
  | 'month'
  | 'drink'
  | 'allergen'
  | 'cuisine'
  | 'instrument'
  | 'book'
  | 'language'
  | 'surname'
  | 'band'
  | 'skill'
  | 'model'
  | 'color'
  | 'restaurant'
  | 'item'
  | 'food'
  | 'relative';

const POOLS: Record<LongmemLang, Record<PoolName, readonly string[]>> = {
  en: {
    female: ['Lena', 'Marisol', 'Ingrid', 'Tamsin', 'Odette', 'Beatriz', 'Greta', 'Yasmin', 'Philippa', 'Noor', 'Saskia', 'Ilse', 'Rowena', 'Clementine', 'Maud', 'Zofia'],
    male: ['Anselm', 'Dorian', 'Matthias', 'Rafferty', 'Casimir', 'Leopold', 'Teodor', 'Bastian', 'Emeric', 'Florian', 'Gideon', 'Hamish', 'Ivo', 'Jasper', 'Lorcan', 'Niall'],
    pet: ['Biscuit', 'Pickle', 'Waffles', 'Noodle', 'Mochi', 'Pretzel', 'Ziggy', 'Juniper', 'Bramble', 'Marmalade', 'Sprocket', 'Turnip', 'Pudding', 'Socks'],
    city: ['Porto', 'Kyoto', 'Ljubljana', 'Valparaiso', 'Tallinn', 'Bergen', 'Marrakesh', 'Hobart', 'Trieste', 'Cusco', 'Gdansk', 'Salzburg', 'Oaxaca', 'Tbilisi', 'Hanoi', 'Reykjavik', 'Seville', 'Bruges', 'Zanzibar', 'Nagasaki', 'Krakow', 'Dubrovnik', 'Halifax', 'Bologna'],
    company: ['Halvorsen Labs', 'Brightwater Logistics', 'Nordwind Energy', 'Quillfeather Press', 'Tessellate Studio', 'Corvid Analytics', 'Marigold Health', 'Ironbark Foods', 'Lanternfish Games', 'Osprey Insurance'],
    job: ['data engineer', 'pharmacist', 'landscape architect', 'sous chef', 'school librarian', 'paramedic', 'tax advisor', 'sound technician', 'physiotherapist', 'urban planner', 'veterinary nurse', 'court interpreter'],
    day: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'],
    month: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
    drink: ['rooibos tea', 'oat-milk matcha', 'hibiscus tea', 'kombucha', 'chicory coffee', 'barley tea', 'yerba mate', 'ginger lemonade'],
    allergen: ['sesame', 'shellfish', 'hazelnuts', 'kiwi', 'celery', 'buckwheat', 'mustard', 'lupin', 'cashews', 'soy'],
    cuisine: ['Ethiopian', 'Georgian', 'Peruvian', 'Sichuan', 'Lebanese', 'Korean', 'Vietnamese', 'Oaxacan', 'Basque', 'Malaysian'],
    instrument: ['cello', 'ukulele', 'accordion', 'harp', 'clarinet', 'banjo', 'oboe', 'saxophone', 'mandolin', 'trombone'],
    book: ['The Salt Orchard', 'Winter in Vellmar', 'A Map of Quiet Rooms', 'The Lighthouse Ledger', 'Nine Paper Boats', 'The Glass Almanac', 'Rivers of Amber', 'The Clockmaker\'s Daughter', 'Small Hours in Lisbon', 'The Copper Fox'],
    language: ['Portuguese', 'Swahili', 'Icelandic', 'Turkish', 'Dutch', 'Greek', 'Tagalog', 'Finnish', 'Hungarian', 'Welsh'],
    surname: ['Okonkwo', 'Lindqvist', 'Ferreira', 'Nakamura', 'Abernathy', 'Castellanos', 'Virtanen', 'Mbeki', 'Oyelaran', 'Radcliffe', 'Szabo', 'Quispe'],
    band: ['The Velvet Lanterns', 'Paper Moons', 'Northern Static', 'Saltwater Choir', 'Glass Orchard', 'The Midnight Ferries', 'Copper Sparrows', 'Hollow Pines'],
    skill: ['pottery', 'woodworking', 'calligraphy', 'bookbinding', 'stained glass', 'watercolour painting', 'beekeeping', 'upholstery', 'silversmithing'],
    model: ['Skoda Octavia', 'Honda Jazz', 'Toyota Corolla', 'Volvo V60', 'Fiat Panda', 'Mazda CX-3', 'Renault Clio', 'Subaru Forester'],
    color: ['dark green', 'silver', 'navy', 'white', 'red', 'grey'],
    restaurant: ['Casa Lupita', 'The Copper Kettle', 'Golden Lotus', 'Trattoria Bellini', 'Blue Fig Bistro', 'Saffron House', 'The Gilded Oyster', 'Little Tokyo Grill', 'Olive Tree Taverna'],
    // item | its paraphrase in a question
    item: ['road bike|new bicycle', 'espresso machine|coffee maker', 'standing desk|adjustable office table', 'winter coat|jacket for the cold', 'drone|flying camera', 'sewing machine|machine for stitching clothes', 'telescope|stargazing gear', 'rowing machine|home exercise equipment'],
    food: ['dumplings', 'noodle soup', 'garlic bread', 'mango salad', 'lentil stew', 'banana pancakes', 'fish tacos', 'mushroom risotto', 'apple crumble', 'chickpea curry'],
    relative: ['cousin', 'aunt', 'uncle', 'neighbour', 'colleague', 'sister', 'brother', 'flatmate', 'godmother', 'nephew'],
  },
  zh: {
    female: ['林晓雯', '陈嘉怡', '周子涵', '郑雨桐', '何佳琪', '罗欣然', '宋雅婷', '韩梦瑶', '冯诗涵', '邓紫萱', '彭若曦', '萧静怡', '董欣怡', '白露瑶', '苏婉清', '叶舒然'],
    male: ['吴思远', '孙明轩', '高俊杰', '梁文博', '谢天宇', '唐浩然', '许志强', '曹一鸣', '曾子轩', '田家豪', '潘宇航', '蒋博文', '魏承泽', '薛景行', '严立诚', '龚书恒'],
    pet: ['豆豆', '旺财', '球球', '年糕', '布丁', '糯米', '馒头', '元宝', '花卷', '团子', '小满', '可乐'],
    city: ['厦门', '大理', '青岛', '哈尔滨', '桂林', '拉萨', '苏州', '西安', '成都', '昆明', '烟台', '洛阳', '泉州', '珠海', '银川', '丽江', '扬州', '景德镇', '乌鲁木齐', '呼伦贝尔', '敦煌', '三亚'],
    company: ['远帆物流', '青禾科技', '北辰能源', '云杉出版社', '澜图设计', '鹊桥数据', '白鹭医疗', '松石食品', '星火游戏', '海燕保险'],
    job: ['数据工程师', '药剂师', '景观设计师', '厨师长', '图书管理员', '急救员', '税务顾问', '录音师', '康复治疗师', '城市规划师', '宠物医生助理', '法庭翻译'],
    day: ['周一', '周二', '周三', '周四', '周五', '周六', '周日'],
    month: ['1月', '2月', '3月', '4月', '5月', '6月', '7月', '8月', '9月', '10月', '11月', '12月'],
    drink: ['路易波士茶', '燕麦拿铁', '洛神花茶', '康普茶', '大麦茶', '菊花茶', '马黛茶', '姜汁柠檬水'],
    allergen: ['芝麻', '虾蟹', '榛子', '猕猴桃', '芹菜', '荞麦', '芥末', '腰果', '黄豆', '芒果'],
    cuisine: ['潮汕菜', '云南菜', '东北菜', '泰国菜', '湘菜', '西北菜', '客家菜', '越南菜', '新疆菜', '徽菜'],
    instrument: ['大提琴', '尤克里里', '手风琴', '竖琴', '单簧管', '古筝', '二胡', '萨克斯', '琵琶', '长号'],
    book: ['盐田果园', '维尔马的冬天', '安静房间的地图', '灯塔账簿', '九只纸船', '玻璃年鉴', '琥珀之河', '钟表匠的女儿', '里斯本的深夜', '铜狐狸'],
    language: ['葡萄牙语', '斯瓦希里语', '冰岛语', '土耳其语', '荷兰语', '希腊语', '芬兰语', '匈牙利语', '泰语', '越南语'],
    surname: ['欧阳', '司马', '诸葛', '上官', '慕容', '东方', '皇甫', '令狐', '公孙', '尉迟', '端木', '南宫'],
    band: ['夜航船乐队', '纸月亮乐队', '北方静电乐队', '咸水合唱团', '玻璃果园乐队', '午夜渡轮乐队', '铜麻雀乐队', '空心松乐队'],
    skill: ['陶艺', '木工', '书法', '手工装订', '彩色玻璃', '水彩画', '养蜂', '软装翻新', '银饰制作'],
    model: ['速腾', '卡罗拉', '思域', '朗逸', '雅阁', '帕萨特', '飞度', '轩逸'],
    color: ['墨绿色', '银色', '深蓝色', '白色', '红色', '灰色'],
    restaurant: ['老码头火锅', '铜壶小馆', '金莲花餐厅', '贝里尼意餐', '蓝无花果小馆', '藏红花之家', '镀金生蚝吧', '小东京烧鸟', '橄榄树希腊菜'],
    item: ['公路自行车|新单车', '意式咖啡机|煮咖啡的机器', '升降办公桌|可调节的书桌', '长款羽绒服|过冬的外套', '航拍无人机|会飞的相机', '家用缝纫机|做衣服的机器', '天文望远镜|看星星的装备', '划船机|在家锻炼的器材'],
    food: ['饺子', '牛肉面', '蒜蓉面包', '凉拌黄瓜', '番茄炖牛腩', '葱油饼', '酸菜鱼', '蘑菇烩饭', '红豆沙', '咖喱鸡'],
    relative: ['表姐', '姑姑', '舅舅', '邻居', '同事', '妹妹', '哥哥', '室友', '干妈', '侄子'],
  },
};

/** Values of one user: fact slots and the filler's distractors. */
class ValueBag {
  private readonly left: Map<PoolName, string[]>;
  /** Every value a fact took, in the order drawn. */
  readonly taken: string[] = [];

  constructor(
    readonly lang: LongmemLang,
    private readonly rng: Rng,
  ) {
    this.left = new Map((Object.keys(POOLS[lang]) as PoolName[]).map((k) => [k, [...POOLS[lang][k]]]));
  }

  /** Draw a fact value: it leaves the pool, so no distractor and no other fact repeats it. */
  take(pool: PoolName): string {
    const left = this.left.get(pool)!;
    if (left.length === 0) throw new RangeError(`pool ${pool} (${this.lang}) exhausted`);
    const v = left.splice(this.rng.int(0, left.length - 1), 1)[0]!;
    this.taken.push(v);
    return v;
  }

  /** A price no other fact of the user has. */
  takePrice(lo: number, hi: number): string {
    for (;;) {
      const n = this.rng.int(lo, hi);
      const v = this.lang === 'en' ? `$${n.toLocaleString('en-US')}` : `${n}元`;
      if (!this.taken.includes(v)) {
        this.taken.push(v);
        return v;
      }
    }
  }

  /** Four digits no other fact of the user has. */
  takeDigits(): string {
    for (;;) {
      const v = String(this.rng.int(1000, 9999));
      if (!this.taken.some((t) => t.includes(v))) {
        this.taken.push(v);
        return v;
      }
    }
  }

  /** An integer in [lo, hi] from the user's stream (not a pool value). */
  int(lo: number, hi: number): number {
    return this.rng.int(lo, hi);
  }

  /** A distractor: a value of the pool no fact took (may repeat). */
  distractor(pool: PoolName): string {
    return this.rng.pick(this.left.get(pool)!);
  }
}

// ---------------------------------------------------------------------------------------------
// Fact kinds. `turns(v)` gives the planted turns (one; two adjacent ones; or the stale statement
// and its later correction), `questions(v)` paraphrases, `spans(v)` the answer, `stale(v)` the
// corrected value.

type Values = Record<string, string>;

interface FactKind {
  slug: string;
  kind: QuestionKind;
  draw(bag: ValueBag): Values;
  turns: Record<LongmemLang, (v: Values) => Array<[string, string]>>;
  questions: Record<LongmemLang, (v: Values) => string[]>;
  spans(v: Values): string[];
  stale?(v: Values): string[];
}

/** `item|paraphrase` pool entries. */
function item(bag: ValueBag): Values {
  const [name, para] = bag.take('item').split('|') as [string, string];
  return { item: name, itemPara: para };
}

/** Every fact kind; each user gets one fact of each (in a shuffled order). */
export const FACT_KINDS: readonly FactKind[] = [
  {
    slug: 'sister-city',
    kind: 'single',
    draw: (b) => ({ sister: b.take('female'), city: b.take('city') }),
    turns: {
      en: (v) => [[`My sister ${v.sister} just started at the hospital in ${v.city}, she sounds thrilled.`, 'That is wonderful news for her, a hospital job is a big step. Is she nervous?']],
      zh: (v) => [[`我妹妹${v.sister}刚去${v.city}的一家医院上班，她特别开心。`, '太好了，在医院工作是很大的一步。她紧张吗？']],
    },
    questions: { en: () => ['Where does my sibling work now?', 'In which city did my sister land her new position?'], zh: () => ['我妹妹现在在哪座城市工作？', '我那位妹妹的新单位在什么地方？'] },
    spans: (v) => [v.city!],
  },
  {
    slug: 'dog-name',
    kind: 'single',
    draw: (b) => ({ pet: b.take('pet') }),
    turns: {
      en: (v) => [[`We finally adopted a puppy from the shelter, we are calling him ${v.pet}.`, 'A shelter puppy, how lovely! The first weeks are a lot of work, but worth it.']],
      zh: (v) => [[`我们终于从收容所领养了一只小狗，给它起名叫${v.pet}。`, '收容所的小狗最可爱了！刚开始几周会比较累，但很值得。']],
    },
    questions: { en: () => ['What did we name the dog we got?', "What is our new pet called?"], zh: () => ['我们家新来的狗叫什么名字？', '我们给新养的宠物取了什么名？'] },
    spans: (v) => [v.pet!],
  },
  {
    slug: 'move-city',
    kind: 'single',
    draw: (b) => ({ city: b.take('city') }),
    turns: {
      en: (v) => [[`Big news: the lease is signed, we are relocating to ${v.city} in the autumn.`, 'Wow, a whole new city! Packing up a flat is exhausting, start early.']],
      zh: (v) => [[`大消息：租房合同签好了，我们秋天要搬去${v.city}。`, '哇，换一座城市生活！收拾行李很累，早点开始吧。']],
    },
    questions: { en: () => ['Which city am I moving to?', 'Where are we going to live after the move?'], zh: () => ['我们打算搬到哪座城市住？', '搬家之后我们会住在哪里？'] },
    spans: (v) => [v.city!],
  },
  {
    slug: 'new-job',
    kind: 'single',
    draw: (b) => ({ job: b.take('job'), company: b.take('company') }),
    turns: {
      en: (v) => [[`I accepted the offer, I will be working as a ${v.job} at ${v.company}.`, 'Congratulations! Accepting an offer always feels like a leap.']],
      zh: (v) => [[`我接受了那份录用通知，以后在${v.company}做${v.job}。`, '恭喜！接受一份新工作总像是跳了一大步。']],
    },
    questions: { en: () => ["What's my new role, and who hired me?", 'Which company did I join, and in what position?'], zh: () => ['我换了什么岗位，是哪家单位聘的我？', '我加入了哪家公司，担任什么职务？'] },
    spans: (v) => [v.job!, v.company!],
  },
  {
    slug: 'purchase',
    kind: 'single',
    draw: (b) => ({ ...item(b), price: b.takePrice(120, 2400) }),
    turns: {
      en: (v) => [[`I treated myself to a ${v.item} yesterday, it came to ${v.price}.`, 'Nice, you deserve a treat now and then. Enjoy it!']],
      zh: (v) => [[`昨天奖励了自己，买了${v.item}，一共花了${v.price}。`, '不错，偶尔犒劳一下自己挺好的，好好享受！']],
    },
    questions: { en: (v) => [`How much did the ${v.itemPara} cost me?`, `What did I pay for my ${v.itemPara}?`], zh: (v) => [`我买${v.itemPara}花了多少钱？`, `我那个${v.itemPara}是多少钱买的？`] },
    spans: (v) => [v.price!],
  },
  {
    slug: 'wedding-date',
    kind: 'single',
    draw: (b) => {
      const month = b.take('month');
      const day = b.int(2, 28);
      return { date: b.lang === 'en' ? `${month} ${day}` : `${month}${day}日` };
    },
    turns: {
      en: (v) => [[`My brother's wedding is set for ${v.date}, save the date.`, 'How exciting! Are you giving a speech?']],
      zh: (v) => [[`我哥哥的婚礼定在${v.date}，记得空出时间。`, '太好了！你要上台讲话吗？']],
    },
    questions: { en: () => ['When is my brother getting married?', 'On what day does my brother tie the knot?'], zh: () => ['我哥哪天办喜事？', '我哥哥结婚是什么日子？'] },
    spans: (v) => [v.date!],
  },
  {
    slug: 'drink',
    kind: 'single',
    draw: (b) => ({ drink: b.take('drink') }),
    turns: {
      en: (v) => [[`I have given up coffee completely, these days it is only ${v.drink} for me.`, 'Cutting coffee is hard, the first week of headaches is the worst.']],
      zh: (v) => [[`我彻底戒掉咖啡了，现在只喝${v.drink}。`, '戒咖啡挺难的，头一周最容易头疼。']],
    },
    questions: { en: () => ['What do I drink instead of my old morning brew?', 'Which beverage have I switched to?'], zh: () => ['不碰咖啡以后我改喝什么了？', '我现在早上用什么饮品代替？'] },
    spans: (v) => [v.drink!],
  },
  {
    slug: 'allergy',
    kind: 'single',
    draw: (b) => ({ allergen: b.take('allergen') }),
    turns: {
      en: (v) => [[`The tests came back: I am allergic to ${v.allergen}, so no more of that.`, 'Good that you found out, allergies can be sneaky. Read the labels!']],
      zh: (v) => [[`检查结果出来了：我对${v.allergen}过敏，以后不能再吃了。`, '查出来就好，过敏有时候很隐蔽。买东西记得看配料表！']],
    },
    questions: { en: () => ['Which food do I have to avoid for medical reasons?', 'What did the doctor say I react badly to?'], zh: () => ['出于健康原因我得避开哪种食物？', '医生说我吃什么会出现不良反应？'] },
    spans: (v) => [v.allergen!],
  },
  {
    slug: 'mother-hometown',
    kind: 'single',
    draw: (b) => ({ city: b.take('city') }),
    turns: {
      en: (v) => [[`Mum grew up in ${v.city}, she still talks about the harbour there.`, 'Childhood places stay with us. Has she been back recently?']],
      zh: (v) => [[`我妈是在${v.city}长大的，她现在还常说起那边的老街。`, '小时候的地方总让人惦记。她最近回去过吗？']],
    },
    questions: { en: () => ['Where was my mother raised?', 'Which town is my mom originally from?'], zh: () => ['我母亲的老家在哪儿？', '我妈妈是哪个地方的人？'] },
    spans: (v) => [v.city!],
  },
  {
    slug: 'son-name',
    kind: 'single',
    draw: (b) => ({ son: b.take('male') }),
    turns: {
      en: (v) => [[`Our boy ${v.son} lost his first tooth today, he was so proud.`, 'A big milestone! Did the tooth fairy visit?']],
      zh: (v) => [[`我家小子${v.son}今天掉了第一颗牙，得意得不行。`, '重要时刻！有没有把牙齿收藏起来？']],
    },
    questions: { en: () => ["What's my son's name?", 'What is our kid called?'], zh: () => ['我儿子叫什么名字？', '我们家孩子的名字是什么？'] },
    spans: (v) => [v.son!],
  },
  {
    slug: 'cuisine',
    kind: 'single',
    draw: (b) => ({ cuisine: b.take('cuisine') }),
    turns: {
      en: (v) => [[`If I had to eat one cuisine forever it would be ${v.cuisine} food.`, 'Good choice, so many flavours to explore there.']],
      zh: (v) => [[`要是一辈子只能吃一种菜系，我选${v.cuisine}。`, '好选择，那里面的味道可丰富了。']],
    },
    questions: { en: () => ['What kind of food do I like best?', 'Which cooking style is my all-time favourite?'], zh: () => ['我最喜欢哪种风味的菜？', '我心目中最好吃的是哪个地方的菜？'] },
    spans: (v) => [v.cuisine!],
  },
  {
    slug: 'instrument',
    kind: 'single',
    draw: (b) => ({ instrument: b.take('instrument') }),
    turns: {
      en: (v) => [[`I have been practising the ${v.instrument} every evening after work.`, 'Consistency is everything with music. Are you taking lessons?']],
      zh: (v) => [[`我最近每天下班后都在练${v.instrument}。`, '学乐器贵在坚持。你有报课吗？']],
    },
    questions: { en: () => ['Which musical instrument am I learning?', 'What do I play in the evenings these days?'], zh: () => ['我在学哪种乐器？', '这阵子晚上我都在演奏什么？'] },
    spans: (v) => [v.instrument!],
  },
  {
    slug: 'partner-job',
    kind: 'single',
    draw: (b) => ({ partner: b.take('female'), job: b.take('job') }),
    turns: {
      en: (v) => [[`My partner ${v.partner} works as a ${v.job}, the shifts are long.`, 'Long shifts are tough on both of you. Do you get evenings together?']],
      zh: (v) => [[`我爱人${v.partner}是${v.job}，经常值很长的班。`, '长班对你们俩都不容易。晚上能一起吃饭吗？']],
    },
    questions: { en: () => ['What does my spouse do for a living?', "What is my other half's profession?"], zh: () => ['我另一半从事什么职业？', '我伴侣是干哪一行的？'] },
    spans: (v) => [v.job!],
  },
  {
    slug: 'race-city',
    kind: 'single',
    draw: (b) => ({ city: b.take('city') }),
    turns: {
      en: (v) => [[`I signed up for the half marathon in ${v.city}, training starts now.`, 'Exciting! Build the distance slowly and rest your knees.']],
      zh: (v) => [[`我报名了${v.city}的半程马拉松，现在开始训练。`, '太棒了！慢慢加量，注意保护膝盖。']],
    },
    questions: { en: () => ['Where is the race I registered for?', 'In which city will I run the 21k?'], zh: () => ['我要参加的那场比赛在哪里举行？', '我要去哪座城市跑二十一公里？'] },
    spans: (v) => [v.city!],
  },
  {
    slug: 'doctor',
    kind: 'single',
    draw: (b) => ({ surname: b.take('surname') }),
    turns: {
      en: (v) => [[`My new GP is Dr. ${v.surname}, she actually listens.`, 'A doctor who listens is worth a lot. Keep her!']],
      zh: (v) => [[`我的新家庭医生是${v.surname}医生，她真的会认真听。`, '会认真听的医生很难得，好好珍惜！']],
    },
    questions: { en: () => ["What's my family doctor called?", 'Who is my general practitioner these days?'], zh: () => ['我现在的全科大夫姓什么？', '给我看病的新大夫叫什么？'] },
    spans: (v) => [v.surname!],
  },
  {
    slug: 'book',
    kind: 'single',
    draw: (b) => ({ book: b.take('book') }),
    turns: {
      en: (v) => [[`I am halfway through ${v.book}, cannot put it down.`, 'Love when a story grabs you like that. No spoilers!']],
      zh: (v) => [[`《${v.book}》我看了一半，根本放不下。`, '被故事抓住的感觉最棒了。别剧透！']],
    },
    questions: { en: () => ['Which novel am I reading at the moment?', 'What book have I been hooked on?'], zh: () => ['我最近在读哪本小说？', '我现在沉迷的是哪本书？'] },
    spans: (v) => [v.book!],
  },
  {
    slug: 'language',
    kind: 'single',
    draw: (b) => ({ language: b.take('language') }),
    turns: {
      en: (v) => [[`I started ${v.language} lessons on an app, twenty minutes a day.`, 'Little and often is the best way. Any phrases yet?']],
      zh: (v) => [[`我开始用手机软件学${v.language}了，每天二十分钟。`, '少量多次最有效。会说几句了吗？']],
    },
    questions: { en: () => ['Which foreign language am I studying?', 'What tongue am I trying to pick up?'], zh: () => ['我在自学哪门外语？', '我正在学习哪种外国话？'] },
    spans: (v) => [v.language!],
  },
  {
    slug: 'trip',
    kind: 'two-turn',
    draw: (b) => ({ month: b.take('month'), city: b.take('city') }),
    turns: {
      en: (v) => [
        [`I booked a trip for ${v.month}, my first proper holiday in ages.`, 'You deserve it! Where are you off to?'],
        [`It's ${v.city}, I have wanted to see it since I was a kid.`, 'What a great choice, you will love it.'],
      ],
      zh: (v) => [
        [`我订了${v.month}的旅行，好久没正经休假了。`, '你值得放个假！去哪儿？'],
        [`去${v.city}，我从小就想去看看。`, '选得真好，你一定会喜欢。'],
      ],
    },
    questions: { en: () => ['Where am I going on holiday, and in which month?', 'What are the destination and timing of my upcoming vacation?'], zh: () => ['我的假期要去哪里，几月份出发？', '我接下来度假的目的地和时间是什么？'] },
    spans: (v) => [v.month!, v.city!],
  },
  {
    slug: 'concert',
    kind: 'two-turn',
    draw: (b) => ({ day: b.take('day'), band: b.take('band') }),
    turns: {
      en: (v) => [
        [`Got two tickets for a concert on ${v.day}!`, 'Fun! Who is playing?'],
        [`${v.band}, at the old arena downtown.`, 'Great venue, the sound there is excellent.'],
      ],
      zh: (v) => [
        [`抢到了两张${v.day}的演唱会门票！`, '好玩！是谁的演出？'],
        [`是${v.band}，在市中心的老体育馆。`, '那个场地不错，音响效果很好。'],
      ],
    },
    questions: { en: () => ['Which band am I going to see, and on what day?', "Who's performing at the show I have tickets for, and when?"], zh: () => ['我要去看哪个乐队，是哪一天？', '我买票的那场演出是谁唱，什么时候？'] },
    spans: (v) => [v.day!, v.band!],
  },
  {
    slug: 'course',
    kind: 'two-turn',
    draw: (b) => ({ month: b.take('month'), skill: b.take('skill') }),
    turns: {
      en: (v) => [
        [`I enrolled in an evening course that begins in ${v.month}.`, 'Oh nice, what is it about?'],
        [`${v.skill[0]!.toUpperCase()}${v.skill.slice(1)}, something with my hands for a change.`, 'That sounds relaxing after a day at a screen.'],
      ],
      zh: (v) => [
        [`我报了一个${v.month}开课的晚间班。`, '哦？学什么的？'],
        [`${v.skill}，想换换脑子动动手。`, '在屏幕前待了一天，这个听着挺放松。'],
      ],
    },
    questions: { en: () => ['What subject is my night class, and when does it start?', 'What will I learn after work, and from which month?'], zh: () => ['我晚上上的课学什么，什么时候开始？', '我下班后要去学什么，从几月起？'] },
    spans: (v) => [v.month!, v.skill!],
  },
  {
    slug: 'car',
    kind: 'two-turn',
    draw: (b) => ({ price: b.takePrice(2500, 19000), color: b.take('color'), model: b.take('model') }),
    turns: {
      en: (v) => [
        [`We finally bought a second-hand car, ${v.price} all in.`, 'Not bad at all. What did you get?'],
        [`A ${v.color} ${v.model}, old but reliable.`, 'Solid pick, those run forever.'],
      ],
      zh: (v) => [
        [`我们终于买了辆二手车，落地${v.price}。`, '挺划算的。买的什么车？'],
        [`一辆${v.color}的${v.model}，旧是旧了点但很靠谱。`, '选得稳，那款车很耐开。'],
      ],
    },
    questions: { en: () => ['What vehicle did we buy, and what did it cost?', 'Which automobile did we get and for how much?'], zh: () => ['我们入手了哪款车，花了多少钱？', '我们家新添的车是什么型号，多少钱？'] },
    spans: (v) => [v.price!, v.model!],
  },
  {
    slug: 'dentist',
    kind: 'corrected',
    draw: (b) => ({ day: b.take('day'), day2: b.take('day') }),
    turns: {
      en: (v) => [
        [`My dentist appointment is on ${v.day} morning.`, `Noted, ${v.day} morning at the dentist.`],
        [`Actually the dental office called, they moved me to ${v.day2}.`, 'Good to know, I have updated it.'],
      ],
      zh: (v) => [
        [`我的牙医预约在${v.day}上午。`, `记下了，${v.day}上午看牙。`],
        [`其实诊所打电话来了，把我改到了${v.day2}。`, '好的，我更新一下。'],
      ],
    },
    questions: { en: () => ['Which day do I see the dentist?', 'When is my dental check-up now?'], zh: () => ['我哪天去看牙？', '我的洗牙检查现在安排在星期几？'] },
    spans: (v) => [v.day2!],
    stale: (v) => [v.day!],
  },
  {
    slug: 'dinner',
    kind: 'corrected',
    draw: (b) => ({ friend: b.take('female'), restaurant: b.take('restaurant'), restaurant2: b.take('restaurant') }),
    turns: {
      en: (v) => [
        [`I booked dinner with ${v.friend} at ${v.restaurant}.`, 'Lovely, I hope the food is good.'],
        [`Change of plans, the dinner with ${v.friend} is now at ${v.restaurant2}.`, 'Okay, new place it is.'],
      ],
      zh: (v) => [
        [`我订了和${v.friend}在${v.restaurant}吃晚饭。`, '不错，希望那家好吃。'],
        [`计划有变，和${v.friend}的晚饭改到${v.restaurant2}了。`, '好的，换地方了。'],
      ],
    },
    questions: { en: () => ['Where am I eating out with my friend?', 'Which restaurant is the meal with my friend at?'], zh: () => ['我跟朋友约的饭在哪家店吃？', '我和朋友的那顿饭现在在哪儿？'] },
    spans: (v) => [v.restaurant2!],
    stale: (v) => [v.restaurant!],
  },
  {
    slug: 'phone',
    kind: 'corrected',
    draw: (b) => ({ d4: b.takeDigits(), d4b: b.takeDigits() }),
    turns: {
      en: (v) => [
        [`My new phone number ends in ${v.d4}, update your notes.`, 'Got it, noted.'],
        [`I switched carriers again, the number now ends in ${v.d4b}.`, 'Updated, thanks for telling me.'],
      ],
      zh: (v) => [
        [`我新手机号尾号是${v.d4}，记一下。`, '好的，记下了。'],
        [`我又换了运营商，现在号码尾号${v.d4b}。`, '已更新，谢谢告诉我。'],
      ],
    },
    questions: { en: () => ['What are the last four digits of my current mobile?', 'How does my cell number end these days?'], zh: () => ['我现在手机最后四位是多少？', '我目前的电话号码末尾几位是什么？'] },
    spans: (v) => [v.d4b!],
    stale: (v) => [v.d4!],
  },
  {
    slug: 'manager',
    kind: 'corrected',
    draw: (b) => ({ mgr: b.take('female'), mgr2: b.take('male') }),
    turns: {
      en: (v) => [
        [`My manager is ${v.mgr}, she is strict but fair.`, 'Strict but fair is not a bad combination.'],
        [`After the reorg I report to ${v.mgr2} now.`, 'Reorgs are unsettling. How is it going so far?'],
      ],
      zh: (v) => [
        [`我的经理是${v.mgr}，严格但公平。`, '严格但公平，其实挺好的。'],
        [`重组之后我现在向${v.mgr2}汇报。`, '重组总让人不安。目前感觉怎么样？'],
      ],
    },
    questions: { en: () => ['Who is my boss at the moment?', 'Who do I currently answer to at work?'], zh: () => ['我现在的领导是谁？', '目前我在公司归谁管？'] },
    spans: (v) => [v.mgr2!],
    stale: (v) => [v.mgr!],
  },
];

// ---------------------------------------------------------------------------------------------
// Filler: chit-chat on the facts' topics, with distractor values.

type Filler = (d: (p: PoolName) => string, price: () => string) => string;

const FILLER: Record<LongmemLang, { user: Record<string, Filler[]>; assistant: Record<string, string[]>; openers: string[]; tails: string[]; generic: string[] }> = {
  en: {
    user: {
      work: [
        (d) => `my ${d('relative')} ${d('female')} says the ${d('company')} office is hiring a ${d('job')} again`,
        (d) => `the meeting with my manager ran late on ${d('day')}, nothing was decided`,
        (d) => `a colleague got an offer from ${d('company')} but turned it down`,
        () => 'there is another reorg rumour at work and everyone is nervous',
        () => 'I spent the whole afternoon on reports and my eyes hurt',
        (d) => `${d('male')} from accounting is leaving for a ${d('job')} job in ${d('city')}`,
        (d) => `the team lunch moved to ${d('restaurant')} because the old place closed`,
        () => 'my new phone keeps buzzing with work emails at night',
      ],
      food: [
        (d) => `I tried a ${d('cuisine')} place near the station and the portions were huge`,
        (d) => `${d('female')} brought homemade ${d('food')} to the office`,
        (d) => `my ${d('relative')} cannot eat ${d('allergen')}, so planning dinner is tricky`,
        (d) => `I had way too much coffee today, maybe I should try ${d('drink')}`,
        (d) => `we cooked ${d('food')} at home on ${d('day')} and it went okay`,
        (_d, p) => `the new bakery sells a loaf for ${p()}, which feels steep`,
        (d) => `I booked a table at ${d('restaurant')} for a friend's birthday`,
      ],
      travel: [
        (d) => `my ${d('relative')} just got back from ${d('city')} and will not stop talking about it`,
        (d) => `flights to ${d('city')} in ${d('month')} are crazy expensive`,
        (d) => `I keep looking at old holiday photos from ${d('city')}`,
        (d) => `${d('male')} is thinking of moving to ${d('city')} for work`,
        (d) => `the train strike on ${d('day')} messed up everyone's plans`,
        (d) => `someone at work booked a trip to ${d('city')} for ${d('month')}`,
        (_d, p) => `a hotel quoted me ${p()} for two nights, no thanks`,
      ],
      family: [
        (d) => `my ${d('relative')} ${d('female')} is visiting next weekend`,
        () => "my sister's kids were loud at the party but it was sweet",
        (d) => `the neighbours got a puppy called ${d('pet')} and it barks all night`,
        () => 'mum called to ask about the holiday plans again',
        () => "my cousin's wedding photos finally arrived",
        (d) => `${d('female')}'s dog ${d('pet')} got into our garden again`,
        (d) => `my brother wants to take up the ${d('instrument')}, we will see how long that lasts`,
      ],
      health: [
        () => 'I slept badly again, probably too much screen time',
        (d) => `my ${d('relative')} has a doctor's appointment on ${d('day')} and I am driving`,
        () => 'the clinic waiting room was packed this morning',
        (d) => `${d('female')} says ${d('allergen')} allergies run in her family`,
        () => 'I should book a dentist check-up, it has been a while',
        () => 'started stretching in the mornings and my back thanks me',
        (d) => `a friend recommended Dr. ${d('surname')} but the waiting list is long`,
      ],
      hobbies: [
        (d) => `${d('male')} lent me a copy of ${d('book')}, not sure I will get to it`,
        (d) => `there is a ${d('band')} concert in ${d('city')} in ${d('month')}`,
        (d) => `my ${d('relative')} is learning the ${d('instrument')} and practising loudly`,
        (d) => `I watched a documentary about ${d('language')} poetry`,
        (d, p) => `a ${d('skill')} class near me costs ${p()} for ten weeks`,
        (d) => `thinking about picking up ${d('language')}, or maybe not`,
        (d) => `someone in my running club did the marathon in ${d('city')}`,
      ],
    },
    assistant: {
      work: ['Work weeks like that drain everyone. Did anything good come of it?', 'Sounds like a lot of uncertainty at the office.', 'Job changes around you can be unsettling.'],
      food: ['That sounds delicious, honestly.', 'Food is such a good way to bring people together.', 'Dinner planning around allergies takes real care.'],
      travel: ['Travel stories always make me want to go somewhere.', 'Prices for trips have really gone up lately.', 'A new city can be a great adventure.'],
      family: ['Family visits are lovely and tiring at the same time.', 'Kids and pets keep life interesting!', 'It is nice that you stay close to them.'],
      health: ['Sleep affects everything, be kind to yourself.', 'Check-ups are boring but worth it.', 'Good for you for looking after your health.'],
      hobbies: ['Hobbies are what keep us sane.', 'That sounds like a fun thing to try.', 'Music and books are the best company.'],
    },
    openers: ['', '', 'So, ', 'Quick update: ', 'Random thought, ', 'Ugh, ', 'By the way, ', 'Funny thing, ', 'Honestly, '],
    tails: ['.', '.', '. Anyway.', '. Not sure what to make of it.', '. It was a long day.', '. Just thought I would mention it.', '!'],
    generic: ['How do you feel about it?', 'Tell me more if you like.', 'Anything I can help with?', 'Keep me posted.', ''],
  },
  zh: {
    user: {
      work: [
        (d) => `我${d('relative')}${d('female')}说${d('company')}又在招${d('job')}了`,
        (d) => `${d('day')}和经理开会拖得很晚，什么都没定下来`,
        (d) => `有个同事拿到了${d('company')}的录用通知，但是拒了`,
        () => '公司里又传要重组，大家都很紧张',
        () => '整个下午都在写报告，眼睛好累',
        (d) => `财务部的${d('male')}要去${d('city')}当${d('job')}了`,
        (d) => `部门聚餐改到了${d('restaurant')}，原来那家关门了`,
        () => '新手机晚上老是收到工作邮件',
      ],
      food: [
        (d) => `我去车站旁边一家${d('cuisine')}馆子吃了，分量特别大`,
        (d) => `${d('female')}带了自己做的${d('food')}来公司`,
        (d) => `我${d('relative')}不能吃${d('allergen')}，所以安排晚饭很麻烦`,
        (d) => `今天咖啡喝太多了，也许该试试${d('drink')}`,
        (d) => `${d('day')}我们在家做了${d('food')}，还行`,
        (_d, p) => `新开的面包店一个面包要${p()}，有点贵`,
        (d) => `我在${d('restaurant')}订了位给朋友过生日`,
      ],
      travel: [
        (d) => `我${d('relative')}刚从${d('city')}回来，一直在讲那边的事`,
        (d) => `${d('month')}飞${d('city')}的机票贵得离谱`,
        (d) => `我一直在翻以前在${d('city')}拍的旅行照片`,
        (d) => `${d('male')}在考虑为了工作搬去${d('city')}`,
        (d) => `${d('day')}火车停运，大家的计划全乱了`,
        (d) => `公司有人订了${d('month')}去${d('city')}的行程`,
        (_d, p) => `一家酒店两晚报价${p()}，算了吧`,
      ],
      family: [
        (d) => `我${d('relative')}${d('female')}下周末要来玩`,
        () => '我妹妹家的孩子在聚会上很吵，不过挺可爱的',
        (d) => `邻居养了一只叫${d('pet')}的小狗，整晚都在叫`,
        () => '我妈又打电话来问假期的安排',
        () => '表姐婚礼的照片终于发过来了',
        (d) => `${d('female')}家的狗${d('pet')}又跑进我们院子了`,
        (d) => `我哥哥想学${d('instrument')}，不知道能坚持多久`,
      ],
      health: [
        () => '又没睡好，可能是晚上看手机太久了',
        (d) => `我${d('relative')}${d('day')}要去看医生，我开车送`,
        () => '今天上午诊所候诊室挤满了人',
        (d) => `${d('female')}说她家里人都对${d('allergen')}过敏`,
        () => '我该约个牙医检查了，好久没去了',
        () => '早上开始做拉伸，背舒服多了',
        (d) => `朋友推荐了${d('surname')}医生，可是要排很久的队`,
      ],
      hobbies: [
        (d) => `${d('male')}借了我一本《${d('book')}》，不知道有没有空看`,
        (d) => `${d('month')}${d('city')}有一场${d('band')}的演出`,
        (d) => `我${d('relative')}在学${d('instrument')}，练得很大声`,
        (d) => `看了一部关于${d('language')}诗歌的纪录片`,
        (d, p) => `我家附近有个${d('skill')}班，十周要${p()}`,
        (d) => `在想要不要学${d('language')}，也可能算了`,
        (d) => `跑团里有人跑了${d('city')}的马拉松`,
      ],
    },
    assistant: {
      work: ['这样的工作周谁都会累。有什么好消息吗？', '听起来公司里变数挺多的。', '身边的人换工作，确实会让人心里不踏实。'],
      food: ['听着就很好吃。', '美食真的很能拉近人和人的距离。', '有人过敏的话，安排饭菜得格外小心。'],
      travel: ['听别人讲旅行总让我也想出去走走。', '最近出行的价格确实涨了不少。', '去一座新城市可以是很棒的冒险。'],
      family: ['家人来访又开心又累。', '有孩子和宠物，生活就很热闹！', '你们关系这么近，真好。'],
      health: ['睡眠影响一切，对自己好一点。', '体检虽然无聊，但很值得。', '你这么注意身体，很好。'],
      hobbies: ['爱好让人保持清醒。', '听起来很值得一试。', '音乐和书是最好的陪伴。'],
    },
    openers: ['', '', '对了，', '说一下，', '突然想到，', '唉，', '顺便说一句，', '有意思的是，', '说真的，'],
    tails: ['。', '。', '。就这样吧。', '。不知道该怎么看。', '。今天好漫长。', '。就是想跟你说一声。', '！'],
    generic: ['你怎么看？', '想聊的话可以多说说。', '有什么我能帮忙的吗？', '有消息告诉我。', ''],
  },
};

const TOPICS = ['work', 'food', 'travel', 'family', 'health', 'hobbies'] as const;

function fillerTurn(lang: LongmemLang, rng: Rng, bag: ValueBag): [string, string] {
  const f = FILLER[lang];
  const topic = rng.pick(TOPICS);
  const d = (p: PoolName) => bag.distractor(p);
  // Distractor prices: any amount, re-drawn while it equals a fact's price.
  const price = () => {
    for (;;) {
      const n = rng.int(5, 3000);
      const v = lang === 'en' ? `$${n.toLocaleString('en-US')}` : `${n}元`;
      if (!bag.taken.some((t) => containsSpan(v, t))) return v;
    }
  };
  const clause = rng.pick(f.user[topic]!)(d, price);
  const opener = rng.pick(f.openers);
  const body = opener === '' && lang === 'en' ? `${clause[0]!.toUpperCase()}${clause.slice(1)}` : `${opener}${clause}`;
  const user = `${body}${rng.pick(f.tails)}`;
  const follow = rng.pick(f.generic);
  const assistant = `${rng.pick(f.assistant[topic]!)}${follow === '' ? '' : lang === 'en' ? ` ${follow}` : follow}`;
  return [user, assistant];
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

interface Planted {
  kind: FactKind;
  values: Values;
  /** Conversation positions of the planted turns (stale first for `corrected`). */
  at: number[];
  query: string;
}

/** One user's attempt; null when its draw broke a span rule (the caller re-rolls). */
function buildUser(lang: LongmemLang, seed: number, k: number, attempt: number, sessions: number, questions: number): { user: LongmemUser; questions: LongmemQuestion[] } | null {
  const id = longmemUser(lang, k);
  const rng = new Rng(hashSeed(seed, 'longmem', lang, k, attempt));
  const bag = new ValueBag(lang, rng);
  // Session dates: from a start in January 2026, 6–21 days apart.
  const dates: string[] = [];
  let t = Date.UTC(2026, 0, 5) + rng.int(0, 20) * 86_400_000;
  const lengths: number[] = [];
  for (let s = 0; s < sessions; s++) {
    dates.push(isoDate(t));
    t += rng.int(6, 21) * 86_400_000;
    lengths.push(rng.int(LONGMEM_TURNS[0], LONGMEM_TURNS[1]));
  }
  const starts = lengths.map((_, s) => lengths.slice(0, s).reduce((a, b) => a + b, 0));
  const total = starts[sessions - 1]! + lengths[sessions - 1]!;
  const sessionOf = (pos: number) => starts.findLastIndex((st) => st <= pos);

  // The user's facts, in a shuffled order (Fisher–Yates), the first `questions` of them.
  const kinds = [...FACT_KINDS];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
  }
  const used = new Set<number>();
  const free = (p: number) => p >= 0 && p < total && !used.has(p);
  const inSession = (s: number) => starts[s]! + rng.int(0, lengths[s]! - 1);
  const planted: Planted[] = [];
  for (const kind of kinds.slice(0, questions)) {
    const values = kind.draw(bag);
    let at: number[] = [];
    for (let tries = 0; tries < 1000 && at.length === 0; tries++) {
      if (kind.kind === 'single') {
        const p = rng.int(0, total - 1);
        if (free(p)) at = [p];
      } else if (kind.kind === 'two-turn') {
        const p = rng.int(0, total - 2);
        if (free(p) && free(p + 1) && sessionOf(p) === sessionOf(p + 1)) at = [p, p + 1];
      } else {
        // The statement in the first sessions, its correction in a later session.
        const s1 = rng.int(0, Math.max(0, sessions - 3));
        const s2 = rng.int(s1 + 1, sessions - 1);
        const a = inSession(s1);
        const b = inSession(s2);
        if (free(a) && free(b)) at = [a, b];
      }
    }
    if (at.length === 0) return null;
    for (const p of at) used.add(p);
    planted.push({ kind, values, at, query: rng.pick(kind.questions[lang](values)) });
  }

  const byPos = new Map<number, [string, string]>();
  for (const p of planted) {
    const lines = p.kind.turns[lang](p.values);
    p.at.forEach((pos, i) => byPos.set(pos, lines[i]!));
  }
  const allSpans = planted.flatMap((p) => [...p.kind.spans(p.values), ...(p.kind.stale?.(p.values) ?? [])]);
  const turns: LongmemTurn[] = [];
  for (let pos = 0; pos < total; pos++) {
    let pair = byPos.get(pos);
    if (!pair) {
      // A filler line that happens to contain a fact's value (a name inside a template's
      // words) is drawn again, so the value still names one fact only.
      do pair = fillerTurn(lang, rng, bag);
      while (allSpans.some((s) => containsSpan(`${pair![0]}\n${pair![1]}`, s)));
    }
    turns.push({ id: `t${String(pos + 1).padStart(3, '0')}`, index: pos, session: dates[sessionOf(pos)]!, userLine: pair[0], assistantLine: pair[1] });
  }
  const texts = turns.map((x) => normalizeText(turnText(lang, x)));
  const qs: LongmemQuestion[] = [];
  for (const p of planted) {
    const spans = p.kind.spans(p.values);
    const staleSpans = p.kind.stale?.(p.values) ?? [];
    const goldPos = p.kind.kind === 'corrected' ? [p.at[1]!] : p.at;
    const stalePos = p.kind.kind === 'corrected' ? [p.at[0]!] : [];
    // Each span in its gold turns and nowhere else; each stale span in its stale turns only;
    // none of them in the question.
    const inUnion = (span: string, where: readonly number[]) => where.some((pos) => containsSpan(texts[pos]!, span, true));
    const nowhereElse = (span: string, where: readonly number[]) => texts.every((x, pos) => where.includes(pos) || !containsSpan(x, span, true));
    if (!spans.every((s) => inUnion(s, goldPos) && nowhereElse(s, goldPos) && !containsSpan(p.query, s))) return null;
    if (!staleSpans.every((s) => inUnion(s, stalePos) && nowhereElse(s, stalePos) && !containsSpan(p.query, s))) return null;
    const qid = `${id}-${p.kind.slug}`;
    qs.push({
      id: qid,
      user: id,
      lang,
      kind: p.kind.kind,
      fact: p.kind.slug,
      query: p.query,
      gold: goldPos.map((pos) => turns[pos]!.id),
      spans,
      stale: stalePos.map((pos) => turns[pos]!.id),
      staleSpans,
      split: isHeldOutQuestion(qid) ? 'heldout' : 'train',
    });
  }
  const sessionsOut = dates.map((date, s) => ({ date, turns: turns.slice(starts[s]!, starts[s]! + lengths[s]!) }));
  return { user: { id, sessions: sessionsOut }, questions: qs };
}

/**
 * Generate a language's users and questions. Deterministic in (seed, language, options).
 * @throws RangeError when the options cannot be met (fewer than 3 sessions, more questions than fact kinds)
 */
export function generateLongmem(lang: LongmemLang, opts: LongmemOptions = {}): LongmemSet {
  const seed = opts.seed ?? LONGMEM_SEED;
  const users = opts.users ?? LONGMEM_USERS;
  const sessions = opts.sessions ?? LONGMEM_SESSIONS;
  const questions = opts.questions ?? FACT_KINDS.length;
  if (sessions < 3) throw new RangeError('longmem needs at least 3 sessions per user');
  if (questions < 1 || questions > FACT_KINDS.length) throw new RangeError(`longmem questions per user: 1…${FACT_KINDS.length}`);
  const out: LongmemSet = { lang, seed, users: [], questions: [] };
  for (let k = 1; k <= users; k++) {
    let built: ReturnType<typeof buildUser> = null;
    for (let attempt = 0; built === null; attempt++) {
      if (attempt >= 50) throw new RangeError(`longmem: no valid draw for ${longmemUser(lang, k)} in 50 attempts`);
      built = buildUser(lang, seed, k, attempt, sessions, questions);
    }
    out.users.push(built.user);
    out.questions.push(...built.questions);
  }
  return out;
}

/** Every turn of a user, in order. */
export function turnsOf(u: LongmemUser): LongmemTurn[] {
  return u.sessions.flatMap((s) => s.turns);
}
