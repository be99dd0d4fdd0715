/**
 * Word lists of the synthetic corpus: topics in English and Chinese, names, tools, and a long
 * tail of generated words, so that lexical document frequencies spread like real text (a few
 * common terms, many rare ones) and queries find a known document among look-alikes.
 */

/** One topic: parallel English and Chinese vocabularies. */
export interface Topic {
  /** Slug used in URIs. */
  slug: string;
  /** English content words. */
  en: readonly string[];
  /** Chinese content words. */
  zh: readonly string[];
}

/** Work and life topics; memories draw from all, resources and code from the first twelve. */
export const TOPICS: readonly Topic[] = [
  { slug: 'deploy', en: ['deployment', 'rollout', 'canary', 'cluster', 'manifest', 'pipeline', 'image', 'replica', 'readiness', 'probe', 'helm', 'blue', 'green', 'traffic'], zh: ['部署', '发布', '灰度', '集群', '镜像', '副本', '探针', '流量', '流水线', '回滚'] },
  { slug: 'database', en: ['database', 'migration', 'index', 'schema', 'query', 'replica', 'vacuum', 'transaction', 'deadlock', 'partition', 'backup', 'snapshot', 'column', 'table'], zh: ['数据库', '迁移', '索引', '表结构', '查询', '事务', '死锁', '分区', '备份', '快照'] },
  { slug: 'caching', en: ['cache', 'eviction', 'ttl', 'invalidation', 'warmup', 'hit', 'ratio', 'memory', 'stampede', 'key', 'shard', 'lease', 'stale', 'refresh'], zh: ['缓存', '淘汰', '过期', '失效', '预热', '命中率', '内存', '雪崩', '分片', '刷新'] },
  { slug: 'auth', en: ['token', 'login', 'session', 'oauth', 'password', 'secret', 'rotation', 'scope', 'permission', 'audit', 'certificate', 'signature', 'tenant', 'identity'], zh: ['令牌', '登录', '会话', '密码', '密钥', '轮换', '权限', '审计', '证书', '租户'] },
  { slug: 'observability', en: ['metrics', 'tracing', 'logging', 'dashboard', 'alert', 'latency', 'percentile', 'span', 'sampling', 'exporter', 'histogram', 'budget', 'slo', 'pager'], zh: ['指标', '链路', '日志', '看板', '告警', '延迟', '分位', '采样', '直方图', '值班'] },
  { slug: 'testing', en: ['test', 'fixture', 'mock', 'coverage', 'flaky', 'integration', 'assertion', 'snapshot', 'property', 'fuzzing', 'harness', 'suite', 'regression', 'contract'], zh: ['测试', '夹具', '覆盖率', '不稳定', '集成', '断言', '快照', '模糊', '回归', '契约'] },
  { slug: 'incidents', en: ['incident', 'outage', 'postmortem', 'timeline', 'mitigation', 'severity', 'oncall', 'escalation', 'runbook', 'rootcause', 'failover', 'degradation', 'pager', 'customer'], zh: ['故障', '宕机', '复盘', '时间线', '缓解', '等级', '升级', '手册', '根因', '切换'] },
  { slug: 'release', en: ['release', 'changelog', 'version', 'tag', 'feature', 'flag', 'freeze', 'hotfix', 'branch', 'candidate', 'semver', 'notes', 'approval', 'milestone'], zh: ['版本', '变更', '标签', '功能', '开关', '冻结', '热修复', '分支', '里程碑', '审批'] },
  { slug: 'search', en: ['search', 'ranking', 'embedding', 'vector', 'recall', 'precision', 'bm25', 'reranker', 'query', 'chunk', 'passage', 'relevance', 'fusion', 'hybrid'], zh: ['搜索', '排序', '向量', '召回', '精度', '重排', '查询', '段落', '相关性', '融合'] },
  { slug: 'billing', en: ['invoice', 'payment', 'refund', 'subscription', 'plan', 'quota', 'usage', 'discount', 'tax', 'currency', 'ledger', 'charge', 'trial', 'receipt'], zh: ['账单', '支付', '退款', '订阅', '套餐', '配额', '用量', '折扣', '税费', '收据'] },
  { slug: 'mobile', en: ['android', 'ios', 'app', 'crash', 'battery', 'offline', 'sync', 'push', 'notification', 'gesture', 'screen', 'layout', 'store', 'review'], zh: ['安卓', '应用', '崩溃', '电量', '离线', '同步', '推送', '通知', '屏幕', '布局'] },
  { slug: 'networking', en: ['dns', 'proxy', 'loadbalancer', 'tls', 'timeout', 'retry', 'packet', 'bandwidth', 'firewall', 'ingress', 'grpc', 'http', 'socket', 'keepalive'], zh: ['域名', '代理', '负载均衡', '超时', '重试', '带宽', '防火墙', '入口', '连接', '心跳'] },
  { slug: 'travel', en: ['flight', 'hotel', 'passport', 'itinerary', 'train', 'luggage', 'visa', 'museum', 'beach', 'mountain', 'ticket', 'airport', 'map', 'souvenir'], zh: ['航班', '酒店', '护照', '行程', '火车', '行李', '签证', '博物馆', '海滩', '机场'] },
  { slug: 'cooking', en: ['recipe', 'dumpling', 'noodle', 'oven', 'spice', 'garlic', 'soup', 'baking', 'bread', 'sauce', 'kitchen', 'dessert', 'mango', 'tofu'], zh: ['菜谱', '饺子', '面条', '烤箱', '香料', '大蒜', '汤', '烘焙', '面包', '甜点'] },
  { slug: 'fitness', en: ['running', 'marathon', 'swimming', 'yoga', 'gym', 'stretching', 'cycling', 'training', 'injury', 'knee', 'coach', 'sprint', 'race', 'medal'], zh: ['跑步', '马拉松', '游泳', '瑜伽', '健身房', '拉伸', '骑行', '训练', '受伤', '教练'] },
  { slug: 'music', en: ['piano', 'guitar', 'concert', 'choir', 'violin', 'rehearsal', 'melody', 'band', 'album', 'drums', 'lesson', 'festival', 'song', 'stage'], zh: ['钢琴', '吉他', '音乐会', '合唱', '小提琴', '排练', '旋律', '乐队', '专辑', '舞台'] },
  { slug: 'family', en: ['birthday', 'wedding', 'grandmother', 'daughter', 'brother', 'holiday', 'dinner', 'gift', 'party', 'school', 'graduation', 'cousin', 'anniversary', 'picnic'], zh: ['生日', '婚礼', '奶奶', '女儿', '哥哥', '假期', '晚饭', '礼物', '聚会', '毕业'] },
  { slug: 'reading', en: ['novel', 'library', 'author', 'chapter', 'poetry', 'biography', 'bookstore', 'essay', 'magazine', 'translation', 'review', 'series', 'fantasy', 'history'], zh: ['小说', '图书馆', '作者', '章节', '诗歌', '传记', '书店', '散文', '杂志', '翻译'] },
  { slug: 'finance', en: ['budget', 'savings', 'mortgage', 'pension', 'stocks', 'salary', 'loan', 'insurance', 'expense', 'interest', 'bank', 'fund', 'rent', 'tax'], zh: ['预算', '储蓄', '房贷', '养老金', '股票', '工资', '贷款', '保险', '开销', '利息'] },
  { slug: 'health', en: ['doctor', 'allergy', 'vaccine', 'sleep', 'diet', 'dentist', 'headache', 'checkup', 'medicine', 'therapy', 'vitamin', 'clinic', 'fever', 'appointment'], zh: ['医生', '过敏', '疫苗', '睡眠', '饮食', '牙医', '头痛', '体检', '药物', '诊所'] },
];

/** Frequent English words mixed into every sentence (the common head of the distribution). */
export const EN_COMMON: readonly string[] = ['the', 'team', 'week', 'again', 'because', 'after', 'before', 'with', 'for', 'new', 'old', 'small', 'first', 'last', 'plan', 'issue', 'note', 'today', 'friday', 'monday'];

/** Frequent Chinese words. */
export const ZH_COMMON: readonly string[] = ['我们', '今天', '上周', '因为', '所以', '已经', '还是', '一个', '这次', '问题', '计划', '大家', '重新', '非常', '终于'];

/** People. Capitalised names weigh double in the lexical signals, as real names do. */
export const EN_NAMES: readonly string[] = ['Alice', 'Bart', 'Chen', 'Dana', 'Elif', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kofi', 'Lena', 'Marta', 'Nadia', 'Omar', 'Priya', 'Quinn', 'Rosa', 'Sven', 'Tomas', 'Uma', 'Victor', 'Wen', 'Yara'];

/** Chinese names. */
export const ZH_NAMES: readonly string[] = ['张伟', '李娜', '王芳', '刘洋', '陈静', '杨帆', '赵磊', '黄敏', '周杰', '吴迪', '徐丽', '孙浩'];

/** Tools and products (capitalised). */
export const TOOLS: readonly string[] = ['Kubernetes', 'Postgres', 'Redis', 'Kafka', 'Grafana', 'Terraform', 'Jenkins', 'Envoy', 'NATS', 'Qdrant', 'SQLite', 'React', 'Flutter', 'Stripe', 'Vault', 'Prometheus'];

/** English verbs in the past tense. */
export const EN_VERBS: readonly string[] = ['moved', 'fixed', 'reviewed', 'tuned', 'migrated', 'replaced', 'measured', 'documented', 'split', 'cached', 'upgraded', 'retried', 'paused', 'scheduled', 'planned', 'enjoyed', 'tried', 'finished', 'started', 'shared'];

/** Chinese verbs. */
export const ZH_VERBS: readonly string[] = ['修复', '调整', '迁移', '替换', '测量', '记录', '拆分', '升级', '安排', '完成', '开始', '分享', '尝试', '讨论', '检查'];

/** English adjectives. */
export const EN_ADJ: readonly string[] = ['slow', 'fast', 'stable', 'noisy', 'expensive', 'cheap', 'broken', 'quiet', 'busy', 'happy', 'tired', 'careful', 'late', 'early'];

/** Chinese adjectives. */
export const ZH_ADJ: readonly string[] = ['很慢', '很快', '稳定', '嘈杂', '昂贵', '便宜', '开心', '疲惫', '仔细', '顺利'];

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'to', 'sa', 'vel', 'dor', 'ni', 'pa', 'qu', 'es', 'tar', 'lin', 'bo', 'gri', 'sto', 'mar', 'fen', 'ul'];

/**
 * The long tail: 20,000 generated words ("kalo", "mirensa"…), drawn with a Zipf skew. They
 * stand for project code names, jargon and typos, the rare terms that make lexical search
 * selective on a large corpus.
 */
export const TAIL: readonly string[] = Array.from({ length: 20_000 }, (_, i) => {
  let w = '';
  let x = i + 21;
  do {
    w += SYLLABLES[x % SYLLABLES.length];
    x = Math.floor(x / SYLLABLES.length);
  } while (x > 0);
  return w;
});
