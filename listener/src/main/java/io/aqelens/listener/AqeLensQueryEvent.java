package io.aqelens.listener;

import org.apache.spark.scheduler.SparkListenerEvent;

/**
 * What the listener adds to the event log: one per finished adaptive SQL execution. Spark's
 * event logger writes it as {@code {"Event":"io.aqelens.listener.AqeLensQueryEvent",
 * "executionId":..,"schemaVersion":1,"payload":"<JSON>"}}; the History Server, which does not
 * know the class, skips it ("Drop unrecognized event").
 */
public class AqeLensQueryEvent implements SparkListenerEvent {
    private final long executionId;
    private final String payload;

    public AqeLensQueryEvent(long executionId, String payload) {
        this.executionId = executionId;
        this.payload = payload;
    }

    public long getExecutionId() {
        return executionId;
    }

    public int getSchemaVersion() {
        return AqeLensListener.SCHEMA;
    }

    public String getPayload() {
        return payload;
    }

    @Override
    public boolean logEvent() {
        return true;
    }
}
