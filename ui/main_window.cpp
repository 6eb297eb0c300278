#include "ui/main_window.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "desktop/units_text.h"
#include "paths.h"
#include "ui/batch_panel.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_tab.h"
#include "ui/error_dialog.h"
#include "ui/history_view.h"
#include "ui/live_charts.h"
#include "ui/model_bar.h"
#include "ui/settings_panel.h"
#include "ui/tabs.h"
#include "ui/widgets/draft_picker.h"
#include "ui/widgets/quantize_dialog.h"
#include "ui/widgets/wrap_label.h"
#include "wb_version.h"

namespace wb::ui {

namespace {

/// The training context of the GGUF at `path` in tokens (0 when the file
/// does not say or cannot be read: the load then reports that error).
int trainedContextOf(const QString& path) {
    try {
        return gui::ModelInfo::probe(path).n_ctx_train;
    } catch (const std::exception&) {
        return 0;
    }
}

}  // namespace

MainWindow::MainWindow(gui::SettingsStore* store, gui::RunRecorder* recorder, QWidget* parent)
    : QMainWindow(parent),
      store_(store),
      recorder_(recorder),
      bridge_(new gui::EngineBridge(this)) {
    bridge_->setRecorder(recorder_);
    setWindowTitle(tr("Inference Workbench"));
    setWindowIcon(QIcon(":/icons/inference-workbench.png"));
    setAcceptDrops(true);
    setObjectName("mainWindow");

    modelBar_ = new ModelBar;
    settingsPanel_ = new SettingsPanel;
    settingsPanel_->setSettings(store_->gen());
    settingsPanel_->setRunLogPrivacy(store_->noText(), store_->textRetentionDays());
    auto current = [this] { return settingsPanel_->settings(); };

    // The tabs, from the one list (tabs.cpp).
    TabContext ctx;
    ctx.bridge = bridge_;
    ctx.recorder = recorder_;
    ctx.store = store_;
    ctx.modelBar = modelBar_;
    ctx.settings = current;
    tabs_ = new QTabWidget;
    for (const TabSpec& spec : tab_specs()) {
        QWidget* page = spec.make(ctx);
        page->setProperty("tabKey", QString::fromLatin1(spec.key));
        tabs_->addTab(page, QCoreApplication::translate("tabs", spec.title));
    }
    // Tab i is entry i of tab_specs() from here on (tabs are never moved).
    chat_ = tab<ChatView>("chat");
    batch_ = tab<BatchPanel>("batch");
    history_ = tab<HistoryView>("history");
    auto* compare = tab<compare::CompareTab>("compare");

    charts_ = new LiveCharts;
    split_ = new QSplitter(Qt::Horizontal);
    split_->addWidget(tabs_);
    split_->addWidget(charts_);
    split_->setStretchFactor(0, 3);
    split_->setStretchFactor(1, 2);

    auto* central = new QWidget;
    auto* cl = new QVBoxLayout(central);
    cl->setContentsMargins(0, 0, 0, 0);
    cl->addWidget(modelBar_);
    cl->addWidget(split_, 1);
    setCentralWidget(central);

    auto* dock = new QDockWidget(tr("Settings"));
    dock->setObjectName("settingsDock");
    auto* scroll = new QScrollArea;
    scroll->setWidget(settingsPanel_);
    scroll->setWidgetResizable(true);
    // The dock must never be narrower than the settings' own width: the
    // tabs' minimum widths (which grow with the system font) otherwise
    // squeeze it to a sliver with its labels cut ("Temperatu").
    settingsPanel_->ensurePolished();  // its size hint with the style's fonts and margins
    scroll->setMinimumWidth(settingsPanel_->sizeHint().width() +
                            scroll->verticalScrollBar()->sizeHint().width() +
                            2 * scroll->frameWidth());
    dock->setWidget(scroll);
    dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                      QDockWidget::DockWidgetClosable);
    addDockWidget(Qt::LeftDockWidgetArea, dock);

    // Fields cut with "…" when the bar is narrow (a long model file name
    // must not widen the window); the whole text is in their tooltips.
    stModel_ = new ElideLabel(tr("no model"));
    stQuant_ = new ElideLabel;
    stDevice_ = new ElideLabel;
    stMemory_ = new ElideLabel;
    stMemory_->setObjectName("statusMemory");
    stState_ = new ElideLabel;
    stMemory_->setToolTip(tr("Engine memory in use: weights + KV cache + activations + staging"));
    for (QLabel* l : {stModel_, stQuant_, stDevice_, stMemory_, stState_}) {
        l->setFrameShape(QFrame::StyledPanel);  // each field boxed, so they don't run together
        l->setContentsMargins(4, 0, 4, 0);
        statusBar()->addPermanentWidget(l);
    }

    buildMenus();
    // "Make quantized copy…" (ui/widgets/quantize_dialog): copy a GGUF as Q4_K_M, Q8_0, ...,
    // then offer the copy beside the original in the Compare tab.
    // Tools sits before Help, which stays last as on every desktop.
    auto* tools = new QMenu(tr("&Tools"), this);
    menuBar()->insertMenu(helpMenu_->menuAction(), tools);
    tools->addAction(tr("Make &quantized copy…"), this, [this, compare] {
        const QString in = QFileDialog::getOpenFileName(
            this, tr("Model to quantize"), store_->recentModels().value(0), tr("GGUF (*.gguf)"));
        if (in.isEmpty()) return;
        auto* dlg = new QuantizeDialog(in, this);
        dlg->setAttribute(Qt::WA_DeleteOnClose);
        connect(dlg, &QuantizeDialog::openInCompare, this,
                [this, compare](const QString& a, const QString& b) {
                    compare->addModel(a);
                    compare->addModel(b);
                    tabs_->setCurrentWidget(compare);
                });
        dlg->show();
    });

    // Devices: the Vulkan ones and the CPU, the default first when it is the
    // CPU. The user's choice (picker or --backend, kept in the settings)
    // wins; without one the default follows the hardware.
    QString vk_error;
    const QList<gui::DeviceEntry> devices = gui::EngineBridge::devices(&vk_error);
    modelBar_->setDevices(devices, vk_error);
    const bool have_vulkan = devices.size() > 1;
    const auto automatic = std::find_if(devices.begin(), devices.end(),
                                        [](const auto& d) { return !d.default_reason.isEmpty(); });
    if (!have_vulkan) {
        modelBar_->selectDevice("cpu", {});
    } else if (!store_->backend().isEmpty() || automatic == devices.end()) {
        modelBar_->selectDevice(store_->backend(), store_->device());
    } else {
        modelBar_->selectDevice(automatic->backend, automatic->selector);
    }
    if (compare) {  // the Compare tab loads on the picker's device too
        const gui::DeviceEntry d = modelBar_->currentDevice();
        compare->setBackend(d.backend, d.backend == "cpu" ? QString() : d.selector);
    }
    if (!have_vulkan && !vk_error.isEmpty()) {
        statusBar()->showMessage(tr("No Vulkan device (%1): using the CPU.").arg(vk_error), 15000);
    } else if (store_->backend().isEmpty() && automatic != devices.end() &&
               automatic->backend == "cpu") {
        statusBar()->showMessage(tr("Using the CPU (%1 threads): %2.")
                                     .arg(automatic->threads)
                                     .arg(automatic->default_reason),
                                 15000);
    }
    modelBar_->setRecent(store_->recentModels());

    connect(modelBar_, &ModelBar::openRequested, this, [this](const QString& p) { openModel(p); });
    connect(modelBar_, &ModelBar::cancelLoadRequested, bridge_, &gui::EngineBridge::cancelLoad);
    connect(modelBar_, &ModelBar::deviceChanged, this, [this](const gui::DeviceEntry& d) {
        store_->setBackend(d.backend);
        store_->setDevice(d.backend == "cpu" ? QString() : d.selector);
        // Picking a device moves the loaded model there (the picker showed
        // the new device while the model kept running on the old one);
        // requests in flight keep it where it is until the next load.
        if (bridge_->hasModel() && !bridge_->isLoading() &&
            bridge_->state() == gui::EngineBridge::State::Idle) {
            openModel(bridge_->modelInfo().path);
            statusBar()->showMessage(
                tr("Loading %1 again on %2…").arg(bridge_->modelInfo().fileName(), d.name));
        } else {
            statusBar()->showMessage(tr("Device %1 is used for the next model load.").arg(d.name),
                                     8000);
        }
    });
    connect(bridge_, &gui::EngineBridge::loadProgress, modelBar_, &ModelBar::setLoading);
    connect(bridge_, &gui::EngineBridge::modelLoaded, this, &MainWindow::onModelLoaded);
    connect(bridge_, &gui::EngineBridge::modelLoadFailed, this, &MainWindow::onLoadFailed);
    connect(bridge_, &gui::EngineBridge::coldStartChanged, modelBar_, &ModelBar::setColdStart);
    connect(bridge_, &gui::EngineBridge::loadCancelled, this, [this] {
        modelBar_->setLoading(-1, {});
        statusBar()->showMessage(tr("Model loading cancelled."), 5000);
        updateStatus();
    });
    connect(bridge_, &gui::EngineBridge::stateChanged, this, [this] {
        updateStatus();
        // A context-size change made during a run: apply it once the
        // engine is idle (queued, so the batch panel sees its last request
        // finish first and its run has ended).
        if (reloadPending_)
            QTimer::singleShot(0, this, [this] {
                if (reloadPending_) applyContextSettings();
            });
    });
    // A batch is a run of its own on the charts, even right after a chat
    // turn (its prefix-cache rate is then the batch's, as its summary says).
    connect(batch_, &BatchPanel::runStarted, charts_, &LiveCharts::beginRun);
    connect(batch_, &BatchPanel::runFinished, this, [this] {
        if (reloadPending_)
            QTimer::singleShot(0, this, [this] {
                if (reloadPending_) applyContextSettings();
            });
    });
    connect(settingsPanel_, &SettingsPanel::changed, this, &MainWindow::onSettingsChanged);
    connect(settingsPanel_, &SettingsPanel::runLogPrivacyChanged, this,
            [this](bool no_text, int days) {
                store_->setNoText(no_text);
                store_->setTextRetentionDays(days);
                if (recorder_) recorder_->setNoText(no_text);
            });
    // A draft model loads with the model: picking one loads it again now,
    // or after the running request.
    connect(chat_, &ChatView::draftFileChanged, this, [this] { applyContextSettings(); });
    connect(chat_, &ChatView::statusMessage, this,
            [this](const QString& m) { showTabMessage(chat_, m, 10000); });
    // A tab's message is about that tab: it goes when the user moves to
    // another one (the tab keeps its own copy, e.g. the Chat tab's status
    // line). Messages about the whole app (model, device, run log) stay.
    connect(statusBar(), &QStatusBar::messageChanged, this, [this](const QString& m) {
        if (m != tabMessage_) tabMessageOwner_ = nullptr;
    });
    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        if (tabMessageOwner_ && tabMessageOwner_ != tabs_->currentWidget())
            statusBar()->clearMessage();
    });
    if (recorder_) {
        connect(recorder_, &gui::RunRecorder::logged, history_, &HistoryView::refreshSoon,
                Qt::QueuedConnection);
        connect(
            recorder_, &gui::RunRecorder::failed, this,
            [this](const QString& m) { statusBar()->showMessage(tr("Run log: %1").arg(m), 10000); },
            Qt::QueuedConnection);
        recorder_->setNoText(store_->noText());
        // The retention the user set is applied once at start, on the
        // recorder's worker (VACUUM may take a moment on a large log).
        connect(
            recorder_, &gui::RunRecorder::purged, this,
            [this](qint64 n, qint64 before, qint64 after, int days) {
                statusBar()->showMessage(
                    tr("Run log: removed the prompts and answers of %n response(s) older than "
                       "%1 days (file %2 -> %3).",
                       nullptr, int(n))
                        .arg(days)
                        .arg(gui::bytes_text(uint64_t(before)), gui::bytes_text(uint64_t(after))),
                    15000);
                history_->refreshSoon();
            },
            Qt::QueuedConnection);
        if (recorder_->isOpen() && !recorder_->isReadOnly() && store_->textRetentionDays() > 0)
            recorder_->purgeTextOlderThanDays(store_->textRetentionDays());
        if (recorder_->isOpen()) {
            history_->setDatabase(recorder_->path());
            if (recorder_->isReadOnly() && recorder_->inspection())
                history_->setDamage(*recorder_->inspection());
        }
    }
    // Compare writes its rows with its own connection (one compare run per
    // comparison), not through the recorder: History refreshes on that too.
    connect(compare, &compare::CompareTab::runLogged, history_, &HistoryView::refreshSoon);
    if (!recorder_ || !recorder_->isOpen())
        history_->setUnavailable(
            tr("Responses are not being logged, so there is no history to show: the run log "
               "could not be opened (see the warning at start) or --no-log was given. Start "
               "with --db PATH to choose the run-log file."));

    timer_ = new QTimer(this);
    timer_->setInterval(100);  // ~10 Hz, on the GUI thread
    connect(timer_, &QTimer::timeout, this, &MainWindow::tick);
    timer_->start();

    if (!store_->windowGeometry().isEmpty())
        restoreGeometry(store_->windowGeometry());
    else
        resize(1400, 860);
    if (!store_->windowState().isEmpty()) restoreState(store_->windowState());
    if (!store_->splitterState().isEmpty()) split_->restoreState(store_->splitterState());
    restoreViewChoices();
    updateStatus();
}

// Keys of the choices kept across restarts besides the generation settings
// and the tabs' own (each under its key, through its TabHooks).
namespace {
const char* const kChartWindow = "view/chart_window_s";
}  // namespace

void MainWindow::showTabMessage(QWidget* tab, const QString& text, int timeout_ms) {
    if (tabs_->currentWidget() != tab) return;  // the tab shows it when the user gets there
    tabMessage_ = text;
    statusBar()->showMessage(text, timeout_ms);
    tabMessageOwner_ = tab;  // after showMessage: messageChanged clears the owner
}

void MainWindow::restoreViewChoices() {
    QSettings& s = store_->raw();
    if (s.contains(kChartWindow)) charts_->setWindowSeconds(s.value(kChartWindow).toDouble());
    for (int i = 0; i < tabs_->count(); ++i) {
        const TabSpec& spec = tab_specs()[static_cast<size_t>(i)];
        if (!spec.hooks.restore) continue;
        s.beginGroup(QLatin1String(spec.key));
        spec.hooks.restore(tabs_->widget(i), s);
        s.endGroup();
    }
}

void MainWindow::saveViewChoices() {
    QSettings& s = store_->raw();
    s.setValue(kChartWindow, charts_->windowSeconds());
    for (int i = 0; i < tabs_->count(); ++i) {
        const TabSpec& spec = tab_specs()[static_cast<size_t>(i)];
        if (!spec.hooks.save) continue;
        s.beginGroup(QLatin1String(spec.key));
        spec.hooks.save(tabs_->widget(i), s);
        s.endGroup();
    }
}

QStringList MainWindow::busyTabs() const {
    QStringList busy;
    for (int i = 0; i < tabs_->count(); ++i) {
        const TabSpec& spec = tab_specs()[static_cast<size_t>(i)];
        const QString what = spec.hooks.busy ? spec.hooks.busy(tabs_->widget(i)) : QString();
        if (!what.isEmpty())
            busy << QStringLiteral("%1: %2").arg(QCoreApplication::translate("tabs", spec.title),
                                                 what);
    }
    return busy;
}

void MainWindow::updateBusyMarks() {
    for (int i = 0; i < tabs_->count(); ++i) {
        const TabSpec& spec = tab_specs()[static_cast<size_t>(i)];
        const QString what = spec.hooks.busy ? spec.hooks.busy(tabs_->widget(i)) : QString();
        const QString title = QCoreApplication::translate("tabs", spec.title);
        // A dot after the title while the tab runs something, what it runs
        // in the tab's tooltip: seen from any other tab.
        const QString text = what.isEmpty() ? title : title + QStringLiteral(" \u25CF");
        if (tabs_->tabText(i) != text) tabs_->setTabText(i, text);
        if (tabs_->tabToolTip(i) != what) tabs_->setTabToolTip(i, what);
    }
}

MainWindow::~MainWindow() = default;

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open model…"), modelBar_, &ModelBar::openDialog);
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open &prompt set…"), this, [this] {
        tabs_->setCurrentWidget(batch_);
        batch_->openPromptDialog();
    });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* chat = menuBar()->addMenu(tr("&Chat"));
    QAction* send = chat->addAction(tr("&Send"), this, [this] {
        tabs_->setCurrentWidget(chat_);
        if (chat_->send(chat_->input()->toPlainText())) chat_->input()->clear();
    });
    send->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    send->setShortcutContext(Qt::WidgetWithChildrenShortcut);  // the input handles it itself
    QAction* stop = chat->addAction(tr("S&top"), this, [this] {
        chat_->stop();
        batch_->cancel();
    });
    stop->setShortcut(QKeySequence(Qt::Key_Escape));
    chat->addAction(tr("&Regenerate"), chat_, &ChatView::regenerate)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    chat->addAction(tr("&Copy last reply"), chat_, &ChatView::copyLastReply)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    chat->addAction(tr("&Edit last message"), this,
                    [this] {
                        tabs_->setCurrentWidget(chat_);
                        chat_->editLastMessage();
                    })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* nc = chat->addAction(tr("&New chat"), this, [this] {
        tabs_->setCurrentWidget(chat_);
        chat_->newChat();
    });
    nc->setShortcut(QKeySequence::New);

    QMenu* batch = menuBar()->addMenu(tr("&Batch"));
    batch
        ->addAction(tr("&Run"), this,
                    [this] {
                        tabs_->setCurrentWidget(batch_);
                        batch_->run();
                    })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_B));
    batch->addAction(tr("&Cancel run"), batch_, &BatchPanel::cancel);
    batch->addAction(tr("Load &sample set"), batch_, &BatchPanel::loadSampleSet);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < tabs_->count(); ++i) {
        const TabSpec& spec = tab_specs()[static_cast<size_t>(i)];
        view->addAction(QCoreApplication::translate("tabs", spec.title), this,
                        [this, i] { tabs_->setCurrentIndex(i); })
            ->setShortcut(spec.shortcut);
    }
    // The Settings dock can be closed with its title-bar button; this is the
    // way back (a checkable action that follows the dock's visibility).
    if (auto* dock = findChild<QDockWidget*>(QStringLiteral("settingsDock"))) {
        view->addSeparator();
        QAction* toggle = dock->toggleViewAction();
        toggle->setText(tr("&Settings panel"));
        toggle->setObjectName("viewSettingsDock");
        toggle->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
        view->addAction(toggle);
    }

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    helpMenu_ = help;
    help->addAction(tr("&Keyboard shortcuts"), this, &MainWindow::showShortcuts)
        ->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&About"), this, [this] {
        QMessageBox::about(this, tr("About Inference Workbench"),
                           tr("<b>Inference Workbench</b> %1 (%2)<br>Run local GGUF models on a "
                              "Vulkan engine and see how they behave when served.")
                               .arg(WB_VERSION, WB_GIT_COMMIT));
    });
}

void MainWindow::showShortcuts() {
    QString tabs;
    for (const TabSpec& spec : tab_specs())
        tabs += QStringLiteral("%1  %2\n")
                    .arg(spec.shortcut.toString(QKeySequence::NativeText),
                         QCoreApplication::translate("tabs", spec.title));
    QMessageBox::information(
        this, tr("Keyboard shortcuts"),
        tr("Ctrl+O  open a model\nCtrl+Enter  send the message\nEsc  stop the reply / cancel the "
           "batch / leave editing\nCtrl+R  regenerate\nCtrl+E  edit the last message (resend drops "
           "the "
           "turns after it)\nCtrl+Shift+C  copy the last reply\nCtrl+N  new chat\nCtrl+B "
           " "
           "run the batch\n") +
            tabs + tr("Ctrl+F  search the history (History tab)\nCtrl+Q  quit"));
}

void MainWindow::openModel(const QString& path, bool force_cpu) {
    gui::LoadRequest req;
    req.path = path;
    const gui::DeviceEntry d = modelBar_->currentDevice();
    req.backend = force_cpu || d.backend.isEmpty() ? "cpu" : d.backend;
    req.device = req.backend == "cpu" ? QString() : d.selector;
    const gui::GenSettings s = settingsPanel_->settings();
    req.n_ctx = s.poolSize(trainedContextOf(path));
    req.n_parallel = s.n_parallel;
    req.kv_type = s.kv_type;
    req.draft_model = chat_->draftFile();
    if (force_cpu) modelBar_->selectDevice("cpu", {});
    // What it will need, shown before the load (which may fail for lack of memory).
    modelBar_->setPlan(gui::plan_text(path, req.n_ctx, req.n_parallel,
                                      req.backend == "cpu" ? 0 : d.memory_bytes, d.type == "cpu",
                                      req.backend == "cpu", req.kv_type));
    bridge_->loadModel(req);
    statusBar()->showMessage(tr("Loading %1…").arg(QFileInfo(path).fileName()));
}

void MainWindow::openStartupModel() {
    const QStringList recent = store_->recentModels();
    if (!recent.isEmpty() && QFileInfo::exists(recent.first())) {
        openModel(recent.first());
        return;
    }
    try {
        openModel(QString::fromStdString(paths::default_model_path().string()));
    } catch (const std::exception& e) {
        statusBar()->showMessage(QString::fromUtf8(e.what()));
    }
}

void MainWindow::onModelLoaded(const gui::ModelInfo& info) {
    modelBar_->setLoading(-1, {});
    modelBar_->setModel(info);
    store_->addRecentModel(info.path);
    store_->setStarted();
    modelBar_->setRecent(store_->recentModels());
    // The charts keep the last run on screen (they continue their time axis
    // after a reload) until the next run starts; the load is marked there
    // and the figures after it count this model's requests only.
    charts_->markModelLoad(info.fileName());
    eventCursor_ = {};
    const gui::LoadRequest& loaded = bridge_->loadedRequest();
    QString loadedText =
        tr("Loaded %1 on %2 (KV pool %3 tokens, %4 KV cache, n_parallel %5%6).")
            .arg(info.fileName(), bridge_->backendName())
            .arg(loaded.n_ctx)
            .arg(loaded.kv_type)
            .arg(loaded.n_parallel)
            .arg(info.n_ctx_train > 0 ? tr("; trained context %1 per request").arg(info.n_ctx_train)
                                      : QString());
    // What the loader did not use (a special token id outside the
    // vocabulary): said where the load is, and kept longer.
    for (const QString& w : info.load_warnings) loadedText += tr(" Warning: %1").arg(w);
    statusBar()->showMessage(loadedText, info.load_warnings.isEmpty() ? 8000 : 30000);
    updateStatus();
    emit modelReady(info);
    // The panel changed while this load ran (it used the values of its start).
    if (reloadPending_)
        QTimer::singleShot(0, this, [this] {
            if (reloadPending_) applyContextSettings();
        });
}

void MainWindow::onLoadFailed(const gui::UserError& e, const gui::LoadRequest& req) {
    modelBar_->setLoading(-1, {});
    updateStatus();
    statusBar()->showMessage(QStringLiteral("%1: %2").arg(e.title, e.what), 20000);
    if (!req.draft_model.isEmpty() && req.draft_model == chat_->draftFile()) {
        // A draft that cannot load (another vocabulary, a bad file) would
        // fail every later load: the chat goes back to no draft (the model
        // loaded before stays), and the message says why.
        gui::SettingsStore::ChatDraft none = chat_->draftPicker()->choice();
        none.kind = QStringLiteral("none");
        chat_->draftPicker()->setChoice(none);
        statusBar()->showMessage(
            tr("The draft model %1 was not loaded (%2); Draft is back to none.")
                .arg(QFileInfo(req.draft_model).fileName(), e.what),
            30000);
    }
    if (e.kind == gui::UserError::Kind::FileNotFound) {
        store_->removeRecentModel(req.path);
        modelBar_->setRecent(store_->recentModels());
    }
    emit loadFailed(e);
    if (!interactive_) return;
    switch (ErrorDialog::ask(e, this)) {
        case ErrorDialog::UseCpu:
            openModel(req.path, true);
            break;
        case ErrorDialog::OpenOther:
            modelBar_->openDialog();
            break;
        default:
            break;
    }
}

void MainWindow::onSettingsChanged(const gui::GenSettings& s, bool reload) {
    store_->setGen(s);
    if (reload) applyContextSettings();
}

bool MainWindow::runGoing() const {
    return bridge_->isLoading() || bridge_->inFlight() > 0 ||
           bridge_->state() == gui::EngineBridge::State::Busy || batch_->isRunning();
}

void MainWindow::applyContextSettings() {
    const gui::GenSettings s = settingsPanel_->settings();
    // Keeps the change for later, saying once when it will apply.
    auto defer = [&](const QString& when) {
        if (!reloadPending_)
            statusBar()->showMessage(tr("Context size %1 and n_parallel %2 apply %3.")
                                         .arg(s.n_ctx > 0 ? QString::number(s.n_ctx) : tr("auto"))
                                         .arg(s.n_parallel)
                                         .arg(when));
        reloadPending_ = true;
    };
    if (bridge_->isLoading()) {  // that load took the panel's values of its start
        defer(tr("when the model has loaded"));
        return;
    }
    if (!bridge_->hasModel()) {  // the next load reads the panel anyway
        reloadPending_ = false;
        return;
    }
    gui::LoadRequest req = bridge_->loadedRequest();
    const int pool = s.poolSize(bridge_->modelInfo().n_ctx_train);
    if (req.n_ctx == pool && req.n_parallel == s.n_parallel && req.kv_type == s.kv_type &&
        req.draft_model == chat_->draftFile()) {
        reloadPending_ = false;  // e.g. focus left the field without a change
        return;
    }
    if (runGoing()) {
        defer(tr("after the current run"));
        return;
    }
    reloadPending_ = false;
    // Same file and device as loaded (also a CPU fallback the picker shows).
    req.n_ctx = pool;
    req.n_parallel = s.n_parallel;
    req.kv_type = s.kv_type;
    req.draft_model = chat_->draftFile();
    const gui::DeviceEntry d = modelBar_->currentDevice();
    modelBar_->setPlan(gui::plan_text(req.path, req.n_ctx, req.n_parallel,
                                      req.backend == "cpu" ? 0 : d.memory_bytes, d.type == "cpu",
                                      req.backend == "cpu", req.kv_type));
    bridge_->loadModel(req);
    statusBar()->showMessage(tr("Loading %1 again with context size %2 and n_parallel %3…")
                                 .arg(bridge_->modelInfo().fileName())
                                 .arg(pool)
                                 .arg(s.n_parallel));
}

void MainWindow::tick() {
    ++ticks_;
    // Snapshots are read here, on the GUI thread; the engine thread only
    // writes the metrics store.
    // With the per-request samples recorded since the last tick: the charts
    // compute their windows over them.
    const gui::LiveSnapshot s = bridge_->snapshot(charts_->statsWindowSeconds(), &eventCursor_);
    if (bridge_->hasModel()) charts_->addSnapshot(s);
    updateBusyMarks();  // every tick: a mark outliving its run by half a second read as stuck
    if (ticks_ % 5 == 0) {
        // Worded as the model bar's plan ("model needs ..."), so the one
        // figure reads the same in both places.
        stMemory_->setText(
            bridge_->hasModel()
                ? tr("memory %1")
                      .arg(gui::bytes_text(static_cast<uint64_t>(std::max(0.0, s.memory.total()))))
                : QString());
        if (bridge_->hasModel()) {
            stState_->setText(tr("%1 · %2 running · %3 queued")
                                  .arg(engineStateText())
                                  .arg(s.running)
                                  .arg(s.queued));
        }
    }
}

QString MainWindow::engineStateText() const {
    switch (bridge_->state()) {
        case gui::EngineBridge::State::NoModel:
            return tr("no model");
        case gui::EngineBridge::State::Loading:
            return tr("loading");
        case gui::EngineBridge::State::Idle:
            return tr("idle");
        case gui::EngineBridge::State::Busy:
            return tr("generating");
    }
    return {};
}

void MainWindow::updateStatus() {
    if (bridge_->hasModel()) {
        const gui::ModelInfo& m = bridge_->modelInfo();
        stModel_->setText(m.fileName());
        stModel_->setToolTip(m.path);
        stQuant_->setText(m.quantization);
        stDevice_->setText(bridge_->backendName());
    }
    stState_->setText(engineStateText());
}

void MainWindow::closeEvent(QCloseEvent* e) {
    // One question naming every busy tab (from the tabs' own hooks).
    const QStringList busy = busyTabs();
    if (!busy.isEmpty() && interactive_) {
        QMessageBox box(
            QMessageBox::Question, tr("Quit while tabs are busy?"),
            tr("Quitting stops what these tabs run:\n%1\nStopped requests are logged "
               "as cancelled.")
                .arg(QStringLiteral("\u2022 ") + busy.join(QStringLiteral("\n\u2022 "))),
            QMessageBox::Yes | QMessageBox::No, this);
        box.setObjectName("confirmQuit");
        box.setDefaultButton(QMessageBox::No);
        box.button(QMessageBox::Yes)->setText(tr("Quit"));
        if (box.exec() != QMessageBox::Yes) {
            e->ignore();
            return;
        }
    }
    store_->setWindow(saveGeometry(), saveState());
    store_->setSplitterState(split_->saveState());
    store_->setGen(settingsPanel_->settings());
    saveViewChoices();
    store_->sync();
    // Each tab stops its work (submits nothing more, cancels), then every
    // request's last event is delivered now (the event loop ends after
    // this), so cancelled requests reach the run log; then each tab closes
    // what it keeps open (its run is marked ended).
    const auto each_tab = [this](std::function<void(QWidget*)> TabHooks::*hook) {
        for (int i = 0; i < tabs_->count(); ++i) {
            const TabHooks& h = tab_specs()[static_cast<size_t>(i)].hooks;
            if (h.*hook) (h.*hook)(tabs_->widget(i));
        }
    };
    each_tab(&TabHooks::stop);
    bridge_->shutdown();
    each_tab(&TabHooks::finish);
    QMainWindow::closeEvent(e);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    for (const QUrl& u : e->mimeData()->urls()) {
        if (u.isLocalFile() && u.toLocalFile().endsWith(".gguf", Qt::CaseInsensitive)) {
            e->acceptProposedAction();
            return;
        }
    }
}

void MainWindow::dropEvent(QDropEvent* e) {
    for (const QUrl& u : e->mimeData()->urls()) {
        if (u.isLocalFile() && u.toLocalFile().endsWith(".gguf", Qt::CaseInsensitive)) {
            openModel(u.toLocalFile());
            e->acceptProposedAction();
            return;
        }
    }
}

}  // namespace wb::ui
