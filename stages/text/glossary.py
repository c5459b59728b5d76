"""Developers' words across languages: what a Chinese, Japanese or Korean word names in English.

A developer asks in Chinese "上次数据库连接超时怎么解决的", about a session whose commands,
logs and explanations said "database connection timeout". The two share no written form,
so the common words of software work are listed with their English names (here, and field
by field in :mod:`~harkback.stages.text.glossary_terms`), and the
ranker searches a CJK word's English names as more forms of it (as it does a short form's
expansions, :mod:`~harkback.stages.text.abbreviations`). The other way round, an English
word in a CJK question ("repo 太大、clone 很慢") also looks for the words of the question's
language, when that word is one index token (two characters: 仓库, 克隆, 배포, 設定).
Only concrete terms are listed: generic words (问题, 解决, 方法, 前回) would join everything.
A word is listed as the planner sees a question's text: a kana ending that framing drops
is left off (期限切れ is listed as 期限切).

>>> english_names("超时"), native_words("clone", "zh")
(('timeout',), ('克隆',))
>>> [(start, end, names) for start, end, names in named_spans("数据库连接超时")]
[(0, 3, ('database', 'db')), (3, 5, ('connection',)), (5, 7, ('timeout',))]
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from harkback.stages.text.glossary_terms import TERMS
from harkback.stages.text.scripts import Script
from harkback.stages.text.tokens import normalize

# English names : Chinese | Japanese | Korean (words separated by spaces).
_GLOSSARY = """
timeout: 超时 | タイムアウト | 타임아웃
database db: 数据库 資料庫 | データベース | 데이터베이스
connection: 连接 連線 連接 连不上 | 接続 コネクション 疎通 | 연결 커넥션 접속
deploy deployment: 部署 上线 | デプロイ | 배포 디플로이
container: 容器 | コンテナ | 컨테이너
image: 镜像 鏡像 映像檔 图片 图像 | イメージ 画像 | 이미지
repository repo: 仓库 代码库 儲存庫 | リポジトリ レポジトリ | 저장소 레포 레포지토리 리포지토리
clone: 克隆 | クローン | 클론
branch: 分支 | ブランチ | 브랜치
merge: 合并 合併 | マージ | 병합 머지
commit: 提交 | コミット | 커밋
log logs: 日志 日誌 | ログ | 로그
error: 报错 错误 錯誤 報錯 | エラー | 에러 오류
exception: 异常 異常 | 例外 | 예외 익셉션
fail failure: 失败 失敗 | 失敗 | 실패
certificate cert: 证书 憑證 證書 | 証明書 | 인증서
permission permissions: 权限 權限 | 権限 パーミッション | 권한
config configuration: 配置 | 設定 コンフィグ | 설정 컨피그
environment env: 环境 環境 | 環境 | 환경
variable: 变量 變數 變量 | 変数 | 변수
port: 端口 連接埠 | ポート | 포트
memory: 内存 記憶體 | メモリ メモリー | 메모리
leak: 泄漏 泄露 洩漏 洩露 | リーク | 누수
cache: 缓存 快取 | キャッシュ | 캐시 캐쉬
index: 索引 | インデックス | 인덱스
query: 查询 查詢 | クエリ | 쿼리
migration migrate: 迁移 遷移 | マイグレーション 移行 | 마이그레이션
backup: 备份 備份 | バックアップ | 백업
restore: 恢复 还原 還原 | リストア 復元 | 복원 복구
rollback: 回滚 回滾 | ロールバック | 롤백
proxy: 代理 | プロキシ | 프록시
balancer: 负载均衡 負載均衡 負載平衡 | ロードバランサ ロードバランサー | 로드밸런서
cron: 定时任务 | 定期実行 | 크론 크론잡
queue: 队列 佇列 隊列 | キュー | 대기열 큐
deadlock: 死锁 死結 死鎖 | デッドロック | 데드락 교착
disk: 磁盘 硬盘 磁碟 硬碟 | ディスク | 디스크
network: 网络 網路 網絡 | ネットワーク | 네트워크
firewall: 防火墙 防火牆 | ファイアウォール | 방화벽
domain: 域名 網域 | ドメイン | 도메인
build: 构建 编译 建置 構建 | ビルド | 빌드
compile: 编译 編譯 | コンパイル | 컴파일
test tests: 测试 測試 单测 | テスト | 테스트
dependency dependencies: 依赖 依賴 相依 | 依存 | 의존성 디펜던시
install: 安装 安裝 | インストール | 설치
upgrade: 升级 升級 | アップグレード | 업그레이드
package: 软件包 套件 | パッケージ | 패키지
server: 服务器 伺服器 服务端 | サーバー サーバ | 서버
cluster: 集群 叢集 | クラスタ クラスター | 클러스터
node: 节点 節點 | ノード | 노드
thread: 线程 執行緒 | スレッド | 스레드 쓰레드
process: 进程 進程 | プロセス | 프로세스
concurrency concurrent: 并发 並發 | 並行 並列 | 동시성
async: 异步 非同步 | 非同期 | 비동기
request: 请求 請求 | リクエスト | 요청 리퀘스트
response: 响应 回應 | レスポンス | 응답 리스폰스
retry: 重试 重試 | リトライ 再試行 | 재시도
script: 脚本 腳本 | スクリプト | 스크립트
function: 函数 函式 函數 | 関数 | 함수
module: 模块 模組 模塊 | モジュール | 모듈
plugin: 插件 外掛 | プラグイン | 플러그인
version: 版本 | バージョン | 버전
directory folder: 目录 文件夹 資料夾 | ディレクトリ フォルダ フォルダー | 디렉토리 폴더 디렉터리
path: 路径 路徑 | パス | 경로
command: 命令 指令 | コマンド | 명령어
password: 密码 密碼 | パスワード | 비밀번호 패스워드
token: 令牌 權杖 | トークン | 토큰
key: 密钥 公钥 私钥 金鑰 | 秘密鍵 公開鍵 キー | 비밀키 키 공개키 개인키
authentication auth login: 认证 登录 認證 登入 | 認証 ログイン | 인증 로그인
encoding: 编码 乱码 編碼 | 文字化 エンコーディング | 인코딩
timezone: 时区 時區 | タイムゾーン | 타임존 시간대
upload: 上传 上傳 | アップロード | 업로드
download: 下载 下載 | ダウンロード | 다운로드
frontend: 前端 | フロントエンド | 프론트엔드
backend: 后端 後端 | バックエンド | 백엔드
browser: 浏览器 瀏覽器 | ブラウザ ブラウザー | 브라우저
webhook: 回调 | ウェブフック | 웹훅 웹후크
schedule scheduler: 调度 排程 | スケジューラ スケジューラー スケジュール | 스케줄러 스케줄
crash: 崩溃 闪退 當機 挂掉 | クラッシュ ダウン | 크래시 크래쉬 다운
slow: 很慢 变慢 卡顿 | 低速 | 느린 느려 느림
service: 服务 服務 | サービス | 서비스
user users: 用户 使用者 用戶 | ユーザー ユーザ | 사용자 유저
startup start: 启动 啟動 | 起動 | 기동 구동
restart: 重启 重啟 | 再起動 | 재시작 재기동
conflict conflicts: 冲突 衝突 | 競合 衝突 コンフリクト | 충돌
pod pods: | ポッド | 파드 포드
heap: 堆内存 | ヒープ | 힙메모리 힙
session sessions: 会话 會話 工作階段 | セッション | 세션
cookie cookies: | クッキー | 쿠키
table tables: 数据表 資料表 | テーブル | 테이블
update: 更新 | 更新 アップデート | 업데이트
renew renewal: 续期 续订 | 更新 | 갱신
expire expired: 过期 過期 | 期限切 失効 | 만료
lock locks: 锁表 加锁 | ロック 排他 | 잠금 락
healthcheck health: 健康检查 健康檢查 | ヘルスチェック 死活 | 헬스체크
hostname: 主机名 | | 호스트명
host: 主机 主機 | ホスト | 호스트
dns: 域名解析 | 名前解決 | 도메인네임
production prod: 生产环境 线上 | 本番 | 운영 프로덕션
development dev: 开发 | 開発 | 개발
job jobs: 作业 | ジョブ |
task tasks: 任务 | タスク | 태스크 작업
worker workers: 工作进程 | ワーカー ワーカ | 워커
batch: 批处理 跑批 | バッチ | 배치
nightly: 夜间 每晚 | 夜間 | 야간
history: 历史 歷史 | 履歴 | 히스토리 기록
file files: 文件 檔案 | ファイル | 파일
secret secrets: | シークレット | 시크릿
size: 体积 | サイズ 容量 | 크기 용량
disconnect disconnects: 断开 断连 | 切断 | 끊김
consumer consumers: 消费者 | コンシューマ コンシューマー | 컨슈머
backlog: 积压 | 滞留 | 적체
annotation annotations: 注解 | アノテーション | 어노테이션
ingress: | イングレス | 인그레스
websocket: | ウェブソケット | 웹소켓
callback: 回调 | コールバック | 콜백
signature: 签名 验签 簽名 簽章 | 署名 | 서명
verify verification: 校验 验证 校驗 驗證 | 検証 | 검증
checksum: 校验和 | チェックサム | 체크섬
payment: 支付 | 決済 | 결제
email mail: 邮件 郵件 | メール | 메일 이메일
notification notifications: 通知 | 通知 | 알림 노티피케이션
push: 推送 推播 | プッシュ | 푸시 푸쉬
search: 搜索 检索 搜尋 檢索 | 検索 | 검색
endpoint: 端点 接口 | エンドポイント | 엔드포인트
column columns: 字段 | カラム | 컬럼 칼럼
schema: 表结构 | スキーマ | 스키마
transaction: 事务 交易 | トランザクション | 트랜잭션 트랜젝션
replica replication: 副本 主从 | レプリカ | 레플리카 복제
latency: 延迟 延遲 | レイテンシ 遅延 | 지연 레이턴시
socket: 套接字 | ソケット | 소켓
encryption encrypt: 加密 | 暗号化 | 암호화
bucket: 存储桶 | バケット | 버킷
storage: 存储 儲存 | ストレージ | 스토리지
volume: 数据卷 | ボリューム | 볼륨
mount: 挂载 掛載 | マウント | 마운트
pipeline: 流水线 管線 | パイプライン | 파이프라인
workflow: 工作流 | ワークフロー | 워크플로 워크플로우
release: 发布 发版 發佈 發布 | リリース | 릴리스 릴리즈
downgrade: 降级 | ダウングレード | 다운그레이드
invalidate invalidation: 失效 | 無効化 | 무효화
flaky: 不稳定 | 不安定 | 불안정
java: | ジャバ | 자바
django: | ジャンゴ | 장고
python: | パイソン | 파이썬
docker: | ドッカー | 도커
kubernetes k8s: | クバネティス クーバネティス | 쿠버네티스
github: | ギットハブ | 깃허브 깃헙
mongodb mongo: | モンゴ | 몽고
postgres postgresql: | ポスグレ ポストグレス | 포스트그레스 포스트그레
jenkins: | ジェンキンス | 젠킨스
elasticsearch: | エラスティックサーチ | 엘라스틱서치
kafka: | カフカ | 카프카
safari: | サファリ | 사파리
"""


LANGUAGES: tuple[Script, ...] = ("zh", "ja", "ko")
"""The table's columns after the English names, in order."""


@cache
def _entries() -> tuple[tuple[tuple[str, ...], tuple[tuple[Script, tuple[str, ...]], ...]], ...]:
    # Each line of the lists as (English names, ((language, its words), ...)), the words
    # normalised as the question's text is (NFKC, case-folded, Latin marks stripped, a
    # kana's voicing kept: ﾋﾞﾙﾄﾞ is searched as ビルド), so both sides agree.
    entries = []
    for line in (_GLOSSARY + TERMS).splitlines():
        if not line.strip() or line.startswith("#"):
            continue  # a blank line, or a field of work's heading
        head, _, rest = line.partition(":")
        entries.append((tuple(head.split()), tuple(
            (language, tuple(normalize(words).split()))
            for language, words in zip(LANGUAGES, rest.split("|"), strict=True))))
    return tuple(entries)


_Natives = dict[tuple[str, Script], tuple[str, ...]]


@cache
def _table() -> tuple[dict[str, tuple[str, ...]], _Natives, _Natives]:
    # Built once: each CJK word with its English names, each English name with its
    # one-token (two-character) words per language, and with its longer words.
    to_english: dict[str, tuple[str, ...]] = {}
    to_native: _Natives = {}
    to_longer: _Natives = {}
    for names, columns in _entries():
        for language, words in columns:
            for word in words:
                to_english[word] = tuple(dict.fromkeys((*to_english.get(word, ()), *names)))
                if len(word) < 2:
                    continue
                into = to_native if len(word) == 2 else to_longer
                for name in names:
                    key = (name, language)
                    into[key] = tuple(dict.fromkeys((*into.get(key, ()), word)))
    return to_english, to_native, to_longer


def english_names(word: str) -> tuple[str, ...]:
    """The English names of a listed CJK word as the index spells it (normalised), or ()
    when it is not listed.

    >>> from harkback.stages.text.tokens import normalize
    >>> english_names(normalize("ビルド"))
    ('build',)
    """
    return _table()[0].get(word, ())


def native_words(name: str, script: Script) -> tuple[str, ...]:
    """The listed one-token (two-character) words of ``script`` for an English ``name``.

    >>> native_words("deploy", "ko"), native_words("database", "zh")
    (('배포',), ())
    """
    return _table()[1].get((name, script), ())


def longer_words(name: str, script: Script) -> tuple[str, ...]:
    """The listed words of ``script`` for an English ``name`` longer than one index token
    (three characters or more: most katakana and Korean loanwords), which the index holds
    as a run of bigrams.

    >>> longer_words("websocket", "ko"), longer_words("deploy", "ko")
    (('웹소켓',), ('디플로이',))
    """
    return _table()[2].get((name, script), ())


def named_spans(run: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """The listed words in a run of CJK text, longest first where two overlap, left to
    right, as ``(start, end, English names)``.

    >>> list(named_spans("把镜像推到仓库"))
    [(1, 3, ('image',)), (5, 7, ('repository', 'repo'))]
    """
    longest = _longest()
    at = 0
    while at < len(run):
        for size in range(min(longest, len(run) - at), 1, -1):
            piece = run[at:at + size]
            if names := english_names(piece):
                yield at, at + size, names
                at += size
                break
        else:
            at += 1


@cache
def listed_words() -> frozenset[str]:
    """Every listed CJK word, normalised: the words framing must leave whole
    (:mod:`~harkback.stages.text.framing`: 文件 holds 件, 批处理 处理, 디플로이 ends as a
    particle would).

    >>> {"超时", "ビルド", "배포"} <= listed_words()
    True
    """
    return frozenset(_table()[0])


@cache
def _longest() -> int:
    # Once, not per run of a question: the table has some thousand words.
    return max((len(w) for w in _table()[0]), default=0)
