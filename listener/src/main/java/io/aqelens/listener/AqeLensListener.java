package io.aqelens.listener;

import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * The AQE Lens listener: add it to any Spark 3.0.1 - 4.3 job
 * ({@code --jars aqe-lens-listener.jar --conf spark.extraListeners=io.aqelens.listener.AqeLensListener})
 * and the job's own event log carries, per finished adaptive SQL execution, the statistics AQE
 * decided with (see {@link PlanRecorder}), as an {@link AqeLensQueryEvent}.
 *
 * <p>It never fails or slows the job: it runs on the listener bus thread after the execution
 * ended, catches every error (logged once per kind), and keeps no state between executions but
 * the default parallelism last read while the context was live.
 */
public class AqeLensListener extends SparkListener {
    static final int SCHEMA = 1;
    static final String VERSION = "1.0.0";
    static final long DEFAULT_MAP_SIZE_CAP = 2_000_000L;
    private static final String END_EVENT = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd";
    private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();
    /** Spark's EventLoggingListener, for the delegate that records on its queue (null otherwise). */
    private final Object eventLogger;
    /** The SparkContext whose event-log queue the delegate is on (null otherwise). */
    private final Object context;
    /** Spark's default parallelism as last read while the context was live (-1: never read). */
    private volatile int liveParallelism = -1;
    private volatile boolean moved;
    private volatile int attempts;
    private volatile String sideFile;

    public AqeLensListener() {
        this(null, null);
        joinWhileSparkContextIsBuilt();
    }

    private AqeLensListener(Object eventLogger, Object context) {
        this.eventLogger = eventLogger;
        this.context = context;
    }

    @Override
    public void onApplicationStart(org.apache.spark.scheduler.SparkListenerApplicationStart event) {
        moveToEventLogQueue();
    }

    @Override
    public void onJobStart(org.apache.spark.scheduler.SparkListenerJobStart event) {
        moveToEventLogQueue();
        if (eventLogger == null && moved) {
            return;  // the delegate on the event-log queue records, and reads it there
        }
        try {
            Object sc = context != null ? context : sparkContext(false);
            if (sc != null) {
                parallelism(sc);
            }
        } catch (Throwable t) {
            logOnce("reading the default parallelism failed", t);
        }
    }

    @Override
    public void onOtherEvent(SparkListenerEvent event) {
        if (event == null || !END_EVENT.equals(event.getClass().getName())) {
            return;
        }
        moveToEventLogQueue();
        if (eventLogger == null && moved) {
            return;  // the delegate on the event-log queue records it
        }
        try {
            handle(event);
        } catch (Throwable t) {
            logOnce("recording an execution failed", t);
        }
    }

    /**
     * Record on Spark's event-log queue, next to its EventLoggingListener: the execution's end is
     * then recorded and written before any later event of the log (the application's end
     * included), so a job that stops right after its last query loses nothing.
     *
     * <p>Spark builds the listeners of {@code spark.extraListeners} inside SparkContext's
     * constructor, after its EventLoggingListener and before the listener bus starts: joining the
     * queue there misses no event. Joining later (a listener added with {@code addSparkListener})
     * can miss an execution that the event-log queue had already passed.
     */
    private void joinWhileSparkContextIsBuilt() {
        try {
            Object sc = sparkContext(true);
            if (sc != null) {
                joinEventLogQueue(sc);
            }
        } catch (Throwable t) {
            // not built by SparkContext: joined at the application's or the first job's start
        }
    }

    private void moveToEventLogQueue() {
        if (eventLogger != null || moved || attempts > 100) {
            return;
        }
        attempts++;
        try {
            Object sc = sparkContext(false);
            if (sc != null) {
                joinEventLogQueue(sc);
            }
        } catch (Throwable t) {
            attempts = Integer.MAX_VALUE;
            logOnce("joining the event-log queue failed (events are posted instead)", t);
        }
    }

    /** The SparkContext being built (we are inside its constructor), or the active one; or null. */
    private static Object sparkContext(boolean beingBuilt) throws Exception {
        Object module = Class.forName("org.apache.spark.SparkContext$").getField("MODULE$").get(null);
        return R.opt(beingBuilt ? R.field(module, "contextBeingConstructed") : R.call(module, "getActive"));
    }

    private void joinEventLogQueue(Object sc) throws Exception {
        Object logger = R.opt(R.call(sc, "eventLogger"));
        if (logger == null) {
            attempts = Integer.MAX_VALUE;  // event logging is off: record here, to the side file
            return;
        }
        R.call(R.call(sc, "listenerBus"), "addToEventLogQueue", new AqeLensListener(logger, sc));
        moved = true;
    }

    private void handle(Object end) throws Exception {
        Object qe = R.tryCall(end, "qe");
        if (qe == null) {
            return;  // an execution of another driver-side session type, or a failed one
        }
        long eid = ((Number) R.call(end, "executionId")).longValue();
        Object session = R.call(qe, "sparkSession");
        Object sc = R.call(session, "sparkContext");
        String version = R.str(R.call(sc, "version"));
        Object conf = R.call(sc, "conf");
        long cap = DEFAULT_MAP_SIZE_CAP;
        Object capText = R.tryCall(conf, "get", "spark.aqelens.mapSizeCap", String.valueOf(cap));
        if (capText != null) {
            cap = Long.parseLong(capText.toString().trim());
        }
        PlanRecorder rec = new PlanRecorder(sc, version, cap);
        Map<String, Object> query = rec.record(qe, eid, parallelism(sc));
        if (!Boolean.TRUE.equals(query.get("adaptive"))) {
            return;
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema", SCHEMA);
        doc.put("listener_version", VERSION);
        doc.put("spark_version", version);
        doc.put("execution_id", eid);
        doc.put("capture_ms", query.get("capture_ms"));
        doc.put("effective_conf", PlanRecorder.sqlConf(qe, true));
        doc.put("query", query);
        String payload = Json.write(doc);
        AqeLensQueryEvent out = new AqeLensQueryEvent(eid, payload);
        if (eventLogger != null) {
            R.call(eventLogger, "onOtherEvent", out);  // on its own queue's thread: written in order
        } else if ("true".equalsIgnoreCase(String.valueOf(R.tryCall(conf, "get", "spark.eventLog.enabled", "false")))) {
            R.call(R.call(sc, "listenerBus"), "post", out);
        } else {
            writeSideFile(conf, sc, eid, payload);
        }
    }

    /**
     * SparkContext.defaultParallelism, read where it cannot refuse: that method throws once
     * {@code stop()} has begun, and a job that stops right after its last query often has the
     * event-log queue still on that query's end. Spark drains the queue after stopping its
     * schedulers, whose executors may be gone by then (a cluster's parallelism then drops to 2),
     * so a stopped context gives the value last read while it was live (at a job's start).
     */
    private int parallelism(Object sc) throws Exception {
        int now = ((Number) R.call(R.call(sc, "taskScheduler"), "defaultParallelism")).intValue();
        if (!Boolean.TRUE.equals(R.call(sc, "isStopped"))) {
            liveParallelism = now;
            return now;
        }
        return liveParallelism > 0 ? liveParallelism : now;
    }

    private synchronized void writeSideFile(Object conf, Object sc, long eid, String payload) throws Exception {
        if (sideFile == null) {
            Object dir = R.tryCall(conf, "get", "spark.aqelens.sideFile.dir", System.getProperty("java.io.tmpdir"));
            String app = R.str(R.call(sc, "applicationId"));
            sideFile = new File(String.valueOf(dir), "aqe-lens-" + app.replaceAll("[^A-Za-z0-9._-]", "_") + ".jsonl").getPath();
            System.err.println("AQE Lens listener: event logging is off; writing to " + sideFile);
        }
        StringBuilder line = new StringBuilder(payload.length() + 128);
        line.append("{\"Event\":\"io.aqelens.listener.AqeLensQueryEvent\",\"executionId\":").append(eid)
            .append(",\"schemaVersion\":").append(SCHEMA).append(",\"payload\":");
        Json.string(line, payload);
        line.append("}\n");
        try (Writer w = new OutputStreamWriter(new FileOutputStream(sideFile, true), StandardCharsets.UTF_8)) {
            w.write(line.toString());
        }
    }

    private void logOnce(String what, Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String key = what + ": " + root.getClass().getName();
        if (LOGGED.add(key)) {
            System.err.println("AQE Lens listener: " + key + ": " + root.getMessage()
                + " (logged once; the job is not affected)");
        }
    }
}
