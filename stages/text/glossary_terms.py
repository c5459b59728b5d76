"""The glossary's words by field of software work, beyond its first list
(:mod:`~harkback.stages.text.glossary`): shells, networks, containers, builds, version
control, databases, the web, apps, security, tests, monitoring, clouds, packages,
performance, data formats, scheduling, queues, editors and machine learning.

Written from the words developers use in each field, not from any question: the concrete
nouns and verbs, each with the forms developers write (katakana loanwords with and without
the long-vowel mark, Korean loanword spellings and Sino-Korean words, simplified and
traditional Chinese). Same format as the first list: English names : Chinese | Japanese |
Korean, a ``#`` line heads a field.

>>> "namespace: 命名空间 | 名前空間 ネームスペース | 네임스페이스" in TERMS
True
"""

TERMS = """
# operating systems and shells
computer pc: 电脑 计算机 | パソコン コンピュータ コンピューター | 컴퓨터
laptop: 笔记本电脑 | ノートパソコン | 노트북 랩탑
setup: 搭建 | 構築 セットアップ | 셋업 세팅
shell: | シェル | 셸 쉘
terminal: 终端 終端機 | ターミナル | 터미널
kernel: 内核 | カーネル | 커널
linux: | リナックス | 리눅스
windows: | ウィンドウズ | 윈도우즈 윈도우
ubuntu: | ウブントゥ | 우분투
daemon: 守护进程 | デーモン | 데몬
signal: 信号 | シグナル | 시그널
symlink symlinks: 软链接 符号链接 | シンボリックリンク シムリンク | 심볼릭링크 심링크
filesystem: 文件系统 | ファイルシステム | 파일시스템
swap: 交换分区 | スワップ | 스왑
partition partitions: 分区 | パーティション | 파티션
driver drivers: 驱动 | ドライバ ドライバー | 드라이버
cpu processor: 处理器 | プロセッサ プロセッサー | 프로세서
pipe: 管道 | パイプ | 파이프
redirect redirection: 重定向 | リダイレクト | 리다이렉트 리디렉션 리다이렉션
alias: 别名 | エイリアス | 별칭 앨리어스
locale: 区域设置 | ロケール | 로케일
clipboard: 剪贴板 | クリップボード | 클립보드
virtual vm venv virtualenv: 虚拟机 虚拟环境 | 仮想 | 가상머신 가상환경
kill killed: 杀掉 杀死 | 強制終了 | 강제종료
shutdown: 关机 | シャットダウン | 셧다운
# networking
bastion jumpbox: 跳板机 堡垒机 | | 배스천 점프서버
breaker circuit: 熔断 | サーキットブレーカー | 서킷브레이커
address: 地址 | アドレス | 주소 어드레스
subnet: 子网 | サブネット | 서브넷
gateway: 网关 | ゲートウェイ | 게이트웨이
router routing route: 路由 路由器 | ルーター ルータ ルーティング | 라우터 라우팅
packet packets: 数据包 报文 | パケット | 패킷
bandwidth: 带宽 | 帯域 帯域幅 | 대역폭
traffic: 流量 | トラフィック | 트래픽
protocol: 协议 | プロトコル | 프로토콜
handshake: 握手 | ハンドシェイク ハンドシェーク | 핸드셰이크
local localhost: 本地 | ローカル | 로컬
remote: 远程 远端 | リモート | 원격 리모트
cors: 跨域 | クロスオリジン | 크로스오리진
nginx: | エンジンエックス | 엔진엑스
apache: | アパッチ | 아파치
listen: 监听 | リッスン | 리슨
bind binding: 绑定 | バインド | 바인딩 바인드
pool pooling: | プール | 풀링
client: 客户端 | クライアント | 클라이언트
load: 负载 压测 | 負荷 | 부하
heartbeat: 心跳 | | 하트비트
# containers and orchestration
compose: | コンポーズ | 컴포즈
entrypoint: 入口点 | | 엔트리포인트
rollout: 滚动更新 | ロールアウト | 롤아웃
registry: | レジストリ | 레지스트리
namespace: 命名空间 | 名前空間 ネームスペース | 네임스페이스
helm: | ヘルム | 헬름
manifest: 清单 | マニフェスト | 매니페스트
scale scaling autoscaling: 扩容 缩容 | スケール スケーリング オートスケール | 스케일링 오토스케일링
sidecar: | サイドカー | 사이드카
probe probes: 探针 | プローブ | 프로브
limit limits: 限制 限流 | 制限 リミット | 제한 리미트
layer layers: | レイヤー レイヤ | 레이어
tag tags: 标签 | タグ | 태그
label labels: | ラベル | 라벨 레이블
overflow: 溢出 | オーバーフロー | 오버플로 오버플로우
# builds, CI and CD
scaffold scaffolding: 脚手架 | スキャフォールド | 스캐폴딩
reload: 热更新 热加载 热重载 | ホットリロード リロード | 핫리로드 리로드
artifact artifacts: 构建产物 制品 | 成果物 アーティファクト | 아티팩트 산출물
runner runners: | ランナー | 러너
stage stages: | ステージ | 스테이지
trigger triggers: 触发器 触发 | トリガー トリガ | 트리거
lint linter: | リンター リンタ リント | 린터 린트
formatter formatting: 格式化 | フォーマッター フォーマッタ | 포매터 포맷터
bundle bundler: 打包 | バンドル バンドラー | 번들 번들러
webpack: | ウェブパック | 웹팩
coverage: 覆盖率 | カバレッジ | 커버리지
hotfix: 热修复 | ホットフィックス | 핫픽스
patch patches: 补丁 | パッチ | 패치
canary: 金丝雀 灰度 | カナリア カナリー | 카나리
staging: 预发布 预发 | ステージング | 스테이징
# version control
checkout: 检出 | チェックアウト | 체크아웃
monorepo: | モノレポ | 모노레포
review reviews: 审查 评审 | レビュー | 리뷰
approval approve: 审批 | 承認 | 승인
git: | ギット | 깃
gitlab: | ギットラボ | 깃랩
pull pr: 拉取 合并请求 拉取请求 | プル プルリク プルリクエスト | 풀리퀘스트 풀리퀘
rebase: 变基 | リベース | 리베이스
stash: 贮藏 | スタッシュ | 스태시
fork: 分叉 | フォーク | 포크
diff: 差异 | 差分 | 디프
revert: 撤销 撤回 | リバート | 리버트 되돌리기
reset: 重置 | リセット | 리셋
submodule submodules: 子模块 | サブモジュール | 서브모듈
hook hooks: 钩子 | フック | 훅
upstream: 上游 | 上流 アップストリーム | 업스트림
squash: | スカッシュ | 스쿼시
# databases
explain: 执行计划 | 実行計画 | 실행계획
record records: | レコード | 레코드
primary master: 主库 主节点 | マスター プライマリ | 마스터 프라이머리
constraint constraints: 约束 | 制約 | 제약 제약조건
join joins: 联表 连表 | ジョイン | 조인
procedure: 存储过程 | プロシージャ ストアド | 프로시저
sharding shard: 分片 分库分表 | シャーディング シャード | 샤딩 샤드
redis: | レディス | 레디스
oracle: | オラクル | 오라클
null: 空值 空指针 | ヌル ヌルポ | 널
timestamp: 时间戳 | タイムスタンプ | 타임스탬프
dump: 转储 | ダンプ | 덤프
export: 导出 | エクスポート | 익스포트 내보내기
import: 导入 | インポート | 임포트 가져오기
duplicate duplicates: 重复 | 重複 | 중복
# the web and HTTP
payload: 载荷 | ペイロード | 페이로드
header headers: 请求头 响应头 | ヘッダー ヘッダ | 헤더
status: 状态码 | ステータス | 상태코드 스테이터스
link url: 链接 网址 | リンク | 링크
form forms: 表单 | フォーム | 폼
middleware: 中间件 | ミドルウェア | 미들웨어
template templates: 模板 | テンプレート | 템플릿
static: 静态 | 静的 | 정적
render rendering: 渲染 | レンダリング | 렌더링
compression compress: 压缩 | 圧縮 | 압축
polling poll: 轮询 | ポーリング | 폴링
# frontend
selector selectors: 选择器 | セレクタ セレクター | 셀렉터
dark: 暗黑模式 深色模式 | ダークモード | 다크모드
component components: 组件 | コンポーネント | 컴포넌트
style styles: 样式 | スタイル | 스타일
layout: 布局 | レイアウト | 레이아웃
button: 按钮 | ボタン | 버튼
page pages: 页面 | ページ | 페이지
event events: 事件 | イベント | 이벤트
font fonts: 字体 | フォント | 폰트
icon icons: 图标 | アイコン | 아이콘
modal dialog: 弹窗 对话框 | モーダル ダイアログ | 모달 다이얼로그
animation: 动画 | アニメーション | 애니메이션
responsive: 响应式 | レスポンシブ | 반응형
scroll scrolling: 滚动 | スクロール | 스크롤
typescript: | タイプスクリプト | 타입스크립트
javascript: | ジャバスクリプト | 자바스크립트
react: | リアクト | 리액트
hydration: 水合 | ハイドレーション | 하이드레이션
screenshot: 截图 | スクリーンショット スクショ | 스크린샷
# mobile apps
app apps: | アプリ | 앱 어플 애플리케이션 어플리케이션
android: | アンドロイド | 안드로이드
iphone: | アイフォン | 아이폰
simulator: 模拟器 | シミュレーター シミュレータ | 시뮬레이터
emulator: 仿真器 | エミュレーター エミュレータ | 에뮬레이터
device devices: 设备 真机 | デバイス 実機 端末 | 기기 디바이스
gradle: | グラドル | 그래들
flutter: | フラッター | 플러터
swift: | スウィフト | 스위프트
kotlin: | コトリン | 코틀린
# security and auth
scan scanner: 扫描 | スキャン | 스캔
authorization: 授权 鉴权 | 認可 | 인가
vulnerability: 漏洞 | 脆弱性 | 취약점
attack: 攻击 | 攻撃 | 공격
injection: 注入 | インジェクション 注入 | 인젝션 주입
hash: 哈希 散列 | ハッシュ | 해시
decrypt decryption: 解密 | 復号 復号化 | 복호화
logout: 登出 | ログアウト | 로그아웃
role roles: 角色 | ロール |
mfa: 双因素认证 | 二要素認証 多要素認証 | 이중인증
credential credentials: 凭证 凭据 | 認証情報 クレデンシャル | 자격증명 크리덴셜
escape escaping: 转义 | エスケープ | 이스케이프
allowlist whitelist: 白名单 | ホワイトリスト | 화이트리스트
denylist blacklist: 黑名单 | ブラックリスト | 블랙리스트
# testing and debugging
stub stubs: | スタブ | 스텁
mock mocks mocking: 模拟 | モック | 모킹
fixture fixtures: 夹具 | フィクスチャ フィクスチャー | 픽스처
assert assertion: 断言 | アサーション アサート | 어설션
regression: 回归 | リグレッション デグレ | 회귀
integration: 集成 | 統合 インテグレーション | 통합
benchmark: 基准测试 | ベンチマーク | 벤치마크
snapshot: 快照 | スナップショット | 스냅샷
debug debugging: 调试 | デバッグ | 디버그 디버깅
breakpoint: 断点 | ブレークポイント ブレイクポイント | 브레이크포인트 중단점
stack stacktrace traceback: 堆栈 调用栈 | スタックトレース スタック | 스택트레이스 스택
warning warnings: 警告 | 警告 ワーニング | 경고 워닝
bug bugs: | バグ 不具合 | 버그
typo: 拼写错误 | タイポ 誤字 | 오타
# monitoring and logging
tracking analytics: 埋点 | トラッキング | 트래킹
ops devops operations: 运维 | 運用 | 데브옵스
threshold: 阈值 | 閾値 | 임계값 임계치
sampling: 采样 | サンプリング | 샘플링
incident: 事故 | インシデント | 인시던트
postmortem: 复盘 | ポストモーテム | 포스트모템
monitoring monitor: 监控 | 監視 モニタリング | 모니터링
alert alerts alarm: 告警 报警 | アラート アラーム | 알람 경보
metric metrics: 指标 | メトリクス メトリック | 메트릭 지표
dashboard: 仪表盘 看板 | ダッシュボード | 대시보드
trace tracing: 链路追踪 追踪 | トレース トレーシング | 트레이스 트레이싱
prometheus: | プロメテウス | 프로메테우스
grafana: | グラファナ | 그라파나
outage downtime: 宕机 故障 | 障害 ダウンタイム | 장애 다운타임
hang freeze: 卡死 卡住 假死 | フリーズ ハング | 먹통 프리즈
usage: 占用 使用率 | 使用率 使用量 | 사용률 사용량
spike: 飙升 | スパイク | 스파이크 급증
rotate rotation: 轮转 | ローテーション | 로테이션
# clouds and infrastructure as code
cloud: 云服务 | クラウド | 클라우드
instance instances: 实例 | | 인스턴스
region: 区域 地域 | リージョン | 리전
policy policies: 策略 | ポリシー | 정책 폴리시
terraform: | テラフォーム | 테라폼
ansible: | アンシブル | 앤서블
serverless: 无服务器 | サーバーレス | 서버리스
lambda: | ラムダ | 람다
quota: 配额 | クォータ | 쿼터 할당량
cost billing: 费用 账单 | 料金 コスト 課金 | 비용 요금 과금
infrastructure infra: 基础设施 | インフラ | 인프라
provisioning provision: 预配 | プロビジョニング | 프로비저닝
# packages
resolver: 解析器 | リゾルバ リゾルバー | 리졸버
lockfile: 锁文件 | ロックファイル | 락파일
uninstall: 卸载 | アンインストール | 언인스톨
mirror: 镜像源 | ミラー | 미러
library libraries: 第三方库 类库 | ライブラリ | 라이브러리
framework: 框架 | フレームワーク | 프레임워크
compatibility compatible: 兼容性 兼容 | 互換性 互換 | 호환성 호환
deprecated deprecation: 弃用 废弃 | 非推奨 |
license: 许可证 | ライセンス | 라이선스 라이센스
# performance
performance: 性能 | パフォーマンス 性能 | 성능 퍼포먼스
optimization optimize: 优化 | 最適化 | 최적화
bottleneck: 瓶颈 | ボトルネック | 병목
profiling profiler: 性能分析 | プロファイリング プロファイラ プロファイラー | 프로파일링 프로파일러
gc garbage: 垃圾回收 | ガベージコレクション ガベコレ | 가비지컬렉션 가비지
throughput: 吞吐量 吞吐 | スループット | 처리량
lazy: 懒加载 | | 지연로딩 레이지로딩
pagination paging: 分页 | ページネーション ページング | 페이지네이션 페이징
flamegraph: 火焰图 | フレームグラフ | 플레임그래프
# data formats and encodings
serialize serialization: 序列化 | シリアライズ | 직렬화
deserialize deserialization: 反序列化 | デシリアライズ | 역직렬화
parse parser parsing: 解析 | パース パーサー パーサ | 파싱 파서
string strings: 字符串 | 文字列 | 문자열
array arrays: 数组 | 配列 | 배열 어레이
integer int: 整数 整型 | 整数 | 정수
float: 浮点 浮点数 | 浮動小数点 | 부동소수점
boolean bool: 布尔 | 真偽値 ブール | 불리언
regex regexp: 正则 正则表达式 | 正規表現 | 정규식 정규표현식
newline crlf: 换行 换行符 | 改行 | 줄바꿈 개행
emoji: 表情 | 絵文字 | 이모지
archive zip: 压缩包 | アーカイブ | 아카이브
binary: 二进制 | バイナリ | 바이너리
unicode: | ユニコード | 유니코드
charset: 字符集 | | 문자셋
field fields: 字段 | フィールド | 필드
# scheduling
interval: 间隔 | 間隔 インターバル | 간격 인터벌
delay delayed: 延时 | ディレイ | 딜레이
timer: 定时器 | タイマー | 타이머
backoff: 退避 | バックオフ | 백오프
idempotent idempotency: 幂等 幂等性 | 冪等 冪等性 | 멱등 멱등성
# messaging and queues
dlq letter: 死信 | デッドレター | 데드레터
producer producers: 生产者 | プロデューサー プロデューサ | 프로듀서 생산자
topic topics: 主题 | トピック | 토픽
offset offsets: 偏移量 偏移 | オフセット | 오프셋
broker: 消息代理 | ブローカー ブローカ | 브로커
message messages: 消息 | メッセージ | 메시지 메세지
subscribe subscription: 订阅 | 購読 サブスクリプション | 구독
celery: | セロリ | 셀러리
stream streaming: 流式 | ストリーム ストリーミング | 스트림 스트리밍
# editors and IDEs
editor: 编辑器 | エディタ エディター | 에디터 편집기
extension extensions: 扩展 | 拡張機能 拡張 | 확장 익스텐션
shortcut keybinding: 快捷键 | ショートカット | 단축키
autocomplete completion: 自动补全 补全 | 補完 | 자동완성
syntax: 语法 | 構文 シンタックス | 문법 구문
indent indentation: 缩进 | インデント | 들여쓰기 인덴트
workspace: 工作区 | ワークスペース | 워크스페이스
refactor refactoring: 重构 | リファクタリング リファクタ | 리팩토링 리팩터링
snippet snippets: 代码片段 | スニペット | 스니펫
# the words of code
parameter parameters param params: 参数 | パラメータ パラメーター | 파라미터 파라메터 매개변수
argument arguments args: 参数 | 引数 | 인자
option options: 选项 | オプション | 옵션
flag flags: 标志 | フラグ | 플래그
property properties attribute attributes: 属性 | プロパティ 属性 | 속성 프로퍼티
default defaults: 默认 | デフォルト 既定 | 기본값 디폴트
class classes: | クラス | 클래스
manager: 管理器 | マネージャー マネージャ | 매니저
interpreter: 解释器 | インタプリタ インタープリタ インタープリター | 인터프리터
provider providers: 提供商 | プロバイダ プロバイダー | 프로바이더
adapter: 适配器 | アダプタ アダプター | 어댑터
listener listeners: 监听器 | リスナー リスナ | 리스너
comment comments: 注释 评论 | コメント | 주석 코멘트 댓글
docs documentation doc: 文档 | ドキュメント | 문서 도큐먼트
consistency: 一致性 | 整合性 | 정합성 일관성
speed: 速度 | 速度 スピード | 속도 스피드
account accounts: 账号 账户 帳號 | アカウント | 계정 어카운트
admin administrator: 管理员 | 管理者 | 관리자 어드민
compiler: 编译器 | コンパイラ コンパイラー | 컴파일러
runtime: 运行时 | ランタイム | 런타임
loop loops: 死循环 循环 | ループ 無限ループ | 루프 무한루프
recursion recursive: 递归 | 再帰 | 재귀
pointer pointers: 指针 | ポインタ ポインター | 포인터
segfault segmentation: 段错误 | セグフォ | 세그폴트
handler handlers: | ハンドラ ハンドラー | 핸들러
controller: 控制器 | コントローラ コントローラー | 컨트롤러
interface: | インターフェース インタフェース インターフェイス | 인터페이스
enum: 枚举 | 列挙型 | 열거형
generic generics: 泛型 | ジェネリクス | 제네릭
closure: 闭包 | クロージャ クロージャー | 클로저
promise promises: | プロミス | 프로미스
coroutine coroutines: 协程 | コルーチン | 코루틴
decorator: 装饰器 | デコレータ デコレーター | 데코레이터
reflection: 反射 | リフレクション | 리플렉션
inheritance: 继承 | 継承 | 상속
dict dictionary: 字典 | 辞書 ディクショナリ | 딕셔너리
iterator: 迭代器 | イテレータ イテレーター | 반복자
generator: 生成器 | ジェネレータ ジェネレーター | 제너레이터
# what goes wrong
refused denied rejected: 拒绝 被拒 | 拒否 | 거부 거절
invalid: 无效 | 無効 | 무효
corrupt corrupted corruption: 损坏 | 破損 | 손상
missing: 缺少 缺失 | 欠落 | 누락
full: 满了 已满 | 満杯 | 가득
access: 访问 | アクセス | 접근 액세스
# products and media
order orders: 订单 | 注文 | 주문
video videos: 视频 | 動画 ビデオ | 동영상 비디오
thumbnail thumbnails: 缩略图 | サムネイル サムネ | 썸네일
blank: 白屏 | |
excel: | エクセル | 엑셀
slack: | スラック | 슬랙
chrome: | クローム | 크롬
firefox: | ファイアフォックス | 파이어폭스
ruby: | ルビー | 루비
rails: | レイルズ | 레일즈
spring: | スプリング | 스프링
laravel: | ララベル | 라라벨
flask: | フラスク | 플라스크
pandas: | パンダス | 판다스
numpy: | | 넘파이
angular: | アンギュラー | 앵귤러
homebrew brew: | ホームブリュー | 홈브루
cloudflare: | クラウドフレア | 클라우드플레어
firebase: | ファイアベース | 파이어베이스
azure: | アジュール | 애저
debian: | デビアン | 데비안
mac macos macbook: | マック | 맥 맥북
# machine learning
evaluation eval: 评估 | 評価 | 평가
gradient: 梯度 | 勾配 | 그래디언트 기울기
agent agents: 智能体 | エージェント | 에이전트
chunk chunks chunking: 分块 | チャンク | 청크
model models: 模型 | モデル | 모델
training train: 训练 | 学習 トレーニング 訓練 | 학습 훈련 트레이닝
inference: 推理 | 推論 | 추론
dataset: 数据集 | データセット | 데이터셋
gpu: 显卡 | グラボ | 그래픽카드
weights weight: 权重 | | 가중치
epoch epochs: | エポック | 에포크 에폭
embedding embeddings: 嵌入 | エンベディング | 임베딩
vector vectors: 向量 | ベクトル ベクター | 벡터
tuning finetune: 微调 | ファインチューニング | 파인튜닝
tokenizer: 分词器 | トークナイザー トークナイザ | 토크나이저
prompt prompts: 提示词 | プロンプト | 프롬프트
jupyter: | ジュピター | 주피터
pytorch torch: | パイトーチ | 파이토치
tensorflow: | テンソルフロー | 텐서플로
overfitting: 过拟合 | 過学習 | 과적합
accuracy: 准确率 | 精度 正解率 | 정확도
checkpoint: 检查点 | チェックポイント | 체크포인트
quantization: 量化 | 量子化 | 양자화
"""
